"""The mistakes of the source lecture notes that this course corrects.

One entry per mistake: where it is, what it says, what is right, and the
test in ``tests/course/test_errata.py`` that fails on the mistaken version. The
book's errata appendix is generated from this list, so the two never drift.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Erratum", "ERRATA"]


@dataclass(frozen=True)
class Erratum:
    id: str
    source: str  # file in the source notes
    topic: str
    wrong: str  # what the notes say or do
    right: str  # what the course does instead
    why: str
    test: str  # test function in tests/course/test_errata.py


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "E1",
        "001 (notebook), get_angles",
        "positional-encoding exponent",
        "angle_rates = 1 / np.power(10000, (2 * i // 2) / np.float32(d_model))",
        "angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))",
        "Python evaluates 2 * i // 2 as (2 * i) // 2 = i, so every dimension gets its own "
        "frequency and dimensions 2i and 2i+1 no longer share one, as the formula of Sec. 3.5 requires.",
        "test_E1_angle_exponent",
    ),
    Erratum(
        "E2",
        "002 (notebook), PositionalEncoding.call",
        "slicing the encoding table",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[1], :]",
        "The last axis of the inputs is the model width, not the sequence length: the slice takes "
        "min(max_len, d_model) rows, so the addition fails unless that equals the length T, and a "
        "one-token input (T = 1, decoding step by step) silently broadcasts to d_model positions.",
        "test_E2_slice_by_length",
    ),
    Erratum(
        "E3",
        "002 (notebook), MultiHeadAttention.call",
        "concatenating the heads",
        "concat_attention = tf.reshape(scaled_dot_product_attention, (batch_size, -1, self.d_model))",
        "concat_attention = tf.reshape(scaled_attention, (batch_size, -1, self.d_model))",
        "The line reshapes the function object instead of its result, so the layer cannot run at all.",
        "test_E3_reshape_the_result",
    ),
    Erratum(
        "E4",
        "002 (notebook), encoder()",
        "applying the positional encoding",
        "embeddings = PositionalEncoding(vocab_size, d_model)",
        "embeddings = PositionalEncoding(max_len, d_model)(embeddings)",
        "The layer is built (with the vocabulary size as its length) but never called, so "
        "'embeddings' becomes the layer object. The next line, Dropout(rate=dropout)(embeddings), then "
        "calls Dropout on a layer instead of a tensor: run as written (Keras 3), it raises ValueError "
        "('Only input tensors may be passed as positional arguments') and the model cannot be built at all. "
        "Had it run, the encoder would have had no positional information.",
        "test_E4_encoding_is_added",
    ),
    Erratum(
        "E5",
        "003 (book notes), multi-head attention",
        "combining the heads",
        "the results of the heads are added (멀티로 한 값들을 더한다)",
        "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O",
        "Adding the heads would give a d_k-wide sum that mixes the subspaces; the paper concatenates "
        "them back to d_model and projects with W^O.",
        "test_E5_heads_are_concatenated",
    ),
    Erratum(
        "E6",
        "001 (notebook), scaled_dot_product_attention",
        "masking under mixed precision",
        "scaled_attention_logits += (mask * -1e9)",
        "logits = where(mask, finfo(dtype).min, logits)",
        "TensorFlow rounds -1e9 to the tensor's dtype before multiplying: in float16 it is -inf, and "
        "0 * -inf is NaN, so every unmasked logit (mask 0) becomes NaN. The softmax of such a row gives "
        "NaN weights to all the unmasked keys, so the row is useless and every output is NaN; the masked "
        "key's weight is NaN or 0 depending on the CPU kernel (the softmax kernels TensorFlow picks for the "
        "CPU and the dtype treat a row of NaN and -inf differently). PyTorch's "
        "mask.half() * -1e9 multiplies by the Python number in float32 and rounds the product: 0 for "
        "unmasked and -inf for masked logits, no NaN; it does give NaN when the -1e9 is itself a float16 "
        "tensor (torch.tensor(-1e9, dtype=torch.half) * mask) or when a row has all its keys masked "
        "(softmax of only -inf). In float32, -1e9 is finite in both frameworks: no NaN, but a fully "
        "masked row gets uniform weights instead of zeros.",
        "test_E6_mask_in_float16",
    ),
    Erratum(
        "E7",
        "002 (notebook), BahdanauAttention.call",
        "the context vector",
        "context_vec = attn * h_enc  # after h_enc = self.w_enc(h_enc)",
        "context = sum_j alpha_j h_j over the encoder states themselves",
        "The notes overwrite h_enc with its projection U_a h_j and sum that; Bahdanau et al. (2015) "
        "weight the annotations h_j, so the context has the encoder's width and meaning.",
        "test_E7_bahdanau_context",
    ),
    Erratum(
        "E8",
        "000 (slides), positional-encoding table",
        "the worked 4x4 table",
        "denominators 1, 10, 100, 1000 and sin(3/100) in row 2",
        "d_model = 4: columns sin(pos/1), cos(pos/1), sin(pos/100), cos(pos/100); row 2 has sin(2/100)",
        "With d_model = 4 the denominators are 10000^(2i/4) for i = 0, 1, each shared by a sine and a "
        "cosine; row 2 evaluates position 2, not 3.",
        "test_E8_worked_table",
    ),
    Erratum(
        "E9",
        "004 (slides), 10x10 distance table",
        "distances between encodings",
        "a distance table whose entries at the same offset differ (1.275, 1.104, 1.296, ...)",
        "||PE(p + k) - PE(p)|| depends on the offset k only",
        "For sinusoidal encodings ||PE(p+k) - PE(p)||^2 = sum_i (2 - 2 cos(k w_i)), the same for "
        "every p, so the table cannot be the distance between the encodings alone.",
        "test_E9_distance_table",
    ),
    Erratum(
        "E10",
        "002 (notebook), Decoder.call",
        "the decoder's recurrent state",
        "out, h_dec = self.gru(out)",
        "state = gru(x, state): the previous decoder state is the GRU's initial state",
        "The GRU is called without initial_state, so its recurrence restarts from zeros at every step. The "
        "previous state still reaches the step, but only as the attention query: it sets the weights over "
        "the encoder states and so the context vector. What the decoder has written so far survives only "
        "through that choice of context (and the previous token fed in); when the encoder states are "
        "alike, so that the query cannot change the context, the incoming state has no effect at all.",
        "test_E10_decoder_keeps_its_state",
    ),
    Erratum(
        "E11",
        "002 (notebook), train_step and evaluate",
        "the decoder's first state",
        "h_dec = enc_out[:, -1]  # sources padded with padding='post'",
        "the encoder output at each row's last non-padding token",
        "With post-padding the last column of enc_out is the state after the pads: the GRU has read "
        "`<pad>` tokens after the sentence, a different number for every sentence length.",
        "test_E11_initial_state_skips_the_padding",
    ),
    Erratum(
        "E12",
        "002 (notebook), loss_function and its call in train_step / eval_step",
        "what the masked per-step mean computes",
        "loss *= mask; return tf.reduce_mean(loss)  # called as loss_function(tgt[:, t], pred), once per step",
        "nothing to fix in the summed loss: each step divides by the batch size B, so the sum over the "
        "steps is sum(loss * mask) / B; the package divides by the number of real tokens, "
        "sum(loss * mask) / sum(mask)",
        "The notes call loss_function on one column tgt[:, t] at a time, so reduce_mean averages over the B "
        "rows of the batch, and the rows whose sentence has already ended (padded at step t) count in the "
        "denominator: a step's value is n_t / B times the mean over its n_t real targets, not that mean, and "
        "means little on its own. Summed over the steps, as train_step does before differentiating, every "
        "real token weighs 1/B whatever the padding: the loss is the mean over the sentences of their summed "
        "token losses. The package's per-token mean divides the same sum by the number N of real tokens "
        "instead: within a batch the notes' loss is the package's times N / B, the same gradient "
        "direction. (The call is easy to misread as a padding bug; the padding-dependent number is the "
        "printed batch_loss, E31.)",
        "test_E12_per_step_mean_counts_padded_rows",
    ),
    Erratum(
        "E13",
        "002 (notebook), preprocess_sentence",
        "cleaning Spanish text",
        're.sub(r"[^a-zA-Z?!.,]+", " ", sentence)',
        "keep every letter (Unicode \\w), as txcourse.data.WordTokenizer does",
        "The class [a-zA-Z] holds no accented letter: 'café' becomes 'caf', 'aquí' 'aqu' (the notebook's "
        "own output shows `<start> salga de aqu ! <end>`), and 'señor' two words 'se or'.",
        "test_E13_accented_letters_survive",
    ),
    Erratum(
        "E14",
        "002 (notebook), Quiz 1",
        "the train/validation split",
        "train_test_split(enc_tensor, dec_tensor)  # 'split 8:2'",
        "train_test_split(enc_tensor, dec_tensor, test_size=0.2)",
        "Without test_size, scikit-learn keeps a quarter for the test side: 30000 pairs split 22500/7500 "
        "(3:1), not the 24000/6000 the quiz asks for. (The notebook's progress bars, 375/375 batches of 64 "
        "per epoch, show that the run printed there used 24,000 pairs: the cell shown is not the one that "
        "ran.)",
        "test_E14_split_is_eight_to_two",
    ),
    Erratum(
        "E15",
        "002 (notebook), markdown above PositionalEncoding",
        "the base of the encoding",
        "PE(pos, 2i) = sin(pos / 1000^(2i/d_model))",
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model))",
        "The paper's base is 10000 (its code below the formula uses 10000 too); with 1000 the wavelengths "
        "run from 2*pi to about 2*pi*1000 only, and the table is a different one.",
        "test_E15_base_is_10000",
    ),
    Erratum(
        "E16",
        "000 (slides), numeric table under the 4x4 table",
        "the worked table's numbers",
        "rows 0.84 0.99 0.009 0.9999995 / 0.90 0.98 0.01 0.999998 / 0.14 0.95 0.02 0.9999955",
        "d_model = 4: row 1 is 0.841 0.540 0.010 0.99995, row 2 0.909 -0.416 0.020 0.9998",
        "The numbers are the slide's symbolic table with E8's denominators 1, 10, 100, 1000, truncated "
        "(not rounded) to two or three decimals: the second column is cos(pos/10) (cos(1/10) = 0.995, printed "
        "0.99) where cos(pos) belongs (cos(1) = 0.540), and the third is sin(pos/100) cut off (sin(1/100) = "
        "0.0099998 printed 0.009, sin(2/100) = 0.019999 printed 0.01, sin(3/100) = 0.029996 printed 0.02). "
        "Row 2 is evaluated at position 2: the sin(3/100) in row 2 of the symbolic table is that table's "
        "slip (E8), not these numbers'.",
        "test_E16_numeric_table",
    ),
    Erratum(
        "E17",
        "000 (slides), Part 1 '특징' 4)",
        "what self-attention makes cheaper",
        "reading the input at once instead of sequentially lowers the computational complexity "
        "(순차적 입력이 아닌 한 번의 입력으로 계산 복잡도 낮춤)",
        "Sec. 4: self-attention layers are faster than recurrent layers when n < d, because a layer costs "
        "O(n^2 d) against O(n d^2) (Table 1); taking the input at once cuts the sequential operations from "
        "O(n) to O(1), not the arithmetic",
        "The claim is the paper's; the reason is not. Computing all positions at once is parallelism: the "
        "same multiplications done together, no fewer of them (one query at a time costs exactly as much). "
        "The per-layer cost is lower only because n^2 d < n d^2 when the sequence length n is below the width "
        "d, 'most often the case with sentence representations' (Sec. 4); for n > d self-attention costs "
        "more, which is why Sec. 4 suggests restricting it to a neighbourhood of size r for long sequences.",
        "test_E17_cheaper_only_when_n_below_d",
    ),
    Erratum(
        "E18",
        "001 (notebook), 패딩 마스크",
        "attention weights after padding",
        "after the softmax the <PAD> positions are 0, so 'the attention weights sum to 0' "
        "(어텐션 가중치의 총합이 0이 된다)",
        "the weights on <PAD> are 0 and every row still sums to 1",
        "The softmax normalises over the keys that remain; masking moves the weight of the pads onto "
        "the real tokens, it does not remove the total.",
        "test_E18_rows_still_sum_to_one",
    ),
    Erratum(
        "E19",
        "001 (notebook), Pointwise_FeedForward_Network and TransformerEmbedding",
        "Keras layers",
        "def __call__(self, x): ...  # and def __call__(self, x, training)",
        "def call(self, x): ...  (Keras' own __call__ then runs call)",
        "Overriding __call__ bypasses Keras: the layer is never built (layer.built stays False), is not "
        "a node of a functional model (its Dense sublayers appear instead, so it cannot be saved or "
        "summarised as one layer), and Keras no longer passes training or masks to it.",
        "test_E19_keras_layers_override_call",
    ),
    Erratum(
        "E20",
        "003 (book notes), self-attention step 3",
        "what the softmax normalises",
        "after the softmax 'the sum of all values is 1' (전체 값의 합은 1이 되고)",
        "each row (one query) sums to 1; the T x T matrix sums to T",
        "The softmax runs over the keys, the last axis, separately for every query.",
        "test_E20_softmax_rows_sum_to_one",
    ),
    Erratum(
        "E21",
        "004 (slides), Self-Attention의 절차 steps 2-4",
        "the order of the steps",
        "step 2: softmax of Q.K; step 3: divide by sqrt(d_k); step 4: softmax",
        "scores Q.K, divide by sqrt(d_k), then one softmax: softmax(QK^T / sqrt(d_k)) (Eq. (1))",
        "A softmax before the scaling leaves numbers that no longer sum to 1 and a second softmax that "
        "is nearly uniform: 112, 96 give 0.53, 0.47 instead of the slide's own 0.88, 0.12.",
        "test_E21_scale_before_softmax",
    ),
    Erratum(
        "E22",
        "003 (book notes), line 478; 001 (notebook), line 216",
        "the scaling of the scores",
        "003: 'Q와 K의 내적 후 행렬의 키 벡터 차원으로 나눈다' (divide by the key dimension d_k); "
        "001: score(q,k) = q*k / sqrt(n)",
        "divide by sqrt(d_k), the square root of the key width: softmax(QK^T / sqrt(d_k)) V (Eq. (1))",
        "Sec. 3.2.1 (footnote 4): for components of mean 0 and variance 1, q.k has variance d_k, and dividing "
        "by sqrt(d_k) brings it back to 1 whatever d_k. Divided by d_k the scores have variance 1/d_k, and "
        "the softmax flattens towards uniform weights as d_k grows. 003 divides by the square root everywhere "
        "else (lines 178-179, 196, 540); line 478, the decoder's masked attention, does not. 001 leaves n undefined; "
        "in this course, as in the paper's Table 1, n is the sequence length, and a scale that changed with "
        "the length would give the same query and keys other weights in a longer sentence.",
        "test_E22_divide_by_sqrt_dk",
    ),
    Erratum(
        "E23",
        "003 (book notes), lines 531-546, the decoder's second sublayer",
        "reading encoder-decoder attention",
        '\'Je 의 셀프 어텐션을 살펴보면, "i" 를 가중치 0.98로 가진다. 결국 Je 는 i와 98%로 유사함을 의미하고 '
        "결국 i와 동의어' (in Je's self-attention, I has weight 0.98: Je is 98% similar to I, a synonym)",
        "it is encoder-decoder attention (queries from the decoder, keys and values from the encoder, "
        "Sec. 3.2.3); 0.98 is the share of Je's attention that goes to I among the source words",
        "The query 'Je' is a target word and the keys are the source words, so this is not self-attention "
        "(001 says so: encoder-decoder attention is not called self-attention). A weight is a softmax over "
        "the keys of one query: it says how far that key outscores the others, not how alike the two words "
        "are. A key nearly orthogonal to the query (cosine 0.08) can get 0.98, and the same pair falls to "
        "0.5 when another key scores as high. Weights that line up translation pairs are a useful picture, "
        "not a measure of synonymy.",
        "test_E23_weight_is_not_similarity",
    ),
    Erratum(
        "E24",
        "003 (book notes), lines 308 and 328; 000 (slides), lines 194 and 211; 001 (notebook), lines 90 "
        "and 129; 004 (slides), line 182",
        "what i counts in PE(pos, 2i)",
        "003: 'i는 임베딩 벡터 내의 차원의 인덱스 (512 차원중 3번째 차원이면 i는 3)'; 000: 'i: 임베딩 벡터 "
        "내에서 몇 차원인지'; 004: 'i: position 표현 위한 차원의 인덱스' (i is the dimension)",
        "i is the pair index, 0 <= i < d_model/2: dimension 2i holds sin(pos / 10000^(2i/d_model)) and "
        "dimension 2i+1 the cosine of the same angle",
        "The paper's sentence 'i is the dimension' (Sec. 3.5) is loose; its formula indexes dimensions 2i "
        "and 2i+1. Read as the dimension, i = 3 puts dimension 3 at the frequency 1/10000^(6/d_model) "
        "instead of 1/10000^(2/d_model): every dimension gets its own frequency, sine and cosine no longer "
        "pair up (sin^2 + cos^2 of a pair is no longer 1), and the wavelengths reach 2 pi 10000^(2(d-1)/d), "
        "far past the 10000 * 2 pi of Sec. 3.5.",
        "test_E24_i_is_the_pair_index",
    ),
    Erratum(
        "E25",
        "000 (slides), encoder_layer notes, line 1188",
        "where the padding mask acts",
        "'padding mask: <pad> 토큰 단어 위치의 임베딩 벡터 값을 아주 작은 음수로 설정' (set the embedding "
        "values at the <pad> positions to a very small negative number)",
        "the mask acts on the attention scores: the scores of the <pad> keys are pushed to a large negative "
        "number before the softmax, as 000's own code does (logits += (mask * -1e9))",
        "The pads' embeddings are left alone; what is masked is every query's score for a <pad> key, so the "
        "pads get weight 0 and the real tokens' outputs are the same with or without them. Setting the "
        "embedding itself to a large negative number masks nothing: a query's score with such a key is of "
        "the order of 1e9, positive or negative depending on the query, so some real tokens would put all "
        "their attention on the pads, whose values (-1e9) would then flood their outputs.",
        "test_E25_padding_mask_acts_on_scores",
    ),
    Erratum(
        "E26",
        "001 (notebook), line 200",
        "what 'multi-head' means",
        "'Multi-head: 트랜스포머가 병렬적으로 수행하는 방법을 의미함' (multi-head means the way the "
        "Transformer runs in parallel)",
        "h attentions, each in its own learned subspace: head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V) of "
        "width d_k = d_model/h, concatenated and projected by W^O (Sec. 3.2.2)",
        "Sec. 3.2.2 does run the heads in parallel, but that is how they are computed, not what they are: "
        "computed one after another they give the same output. What makes attention multi-head is that "
        "each head has its own projections and its own softmax, so the model can 'jointly attend to "
        "information from different representation subspaces at different positions'; one attention over "
        "the same projections merged into a single head gives a different output ('with a single attention "
        "head, averaging inhibits this').",
        "test_E26_heads_are_subspaces",
    ),
    Erratum(
        "E27",
        "001 (notebook), TransformerEmbedding, line 521",
        "why the embeddings are scaled by sqrt(d_model)",
        "'x에 sqrt(d_model) 만큼을 곱해주냐면, 임베딩 벡터보다 포지셔널 인코딩 임베딩 벡터의 영향력을 줄이기 "
        "위해서임' (to make the positional encoding weigh less than the embedding)",
        "Sec. 3.4 states the scaling ('we multiply those weights by sqrt(d_model)') and gives no reason; "
        "a reason offered for it is a guess and must be marked as one",
        "Whether the scaled embedding outweighs the encoding depends on how the table is initialised, which "
        "the paper does not say. A sinusoidal encoding has components of root mean square sqrt(1/2) whatever "
        "d_model. 001's own embedding (Keras' default, uniform in [-0.05, 0.05], root mean square "
        "0.05/sqrt(3)) times sqrt(d_model) has 0.33 at d_model = 128 and 0.65 at 512: still the smaller "
        "part, the opposite of the stated purpose. The package initialises the table N(0, 1/d_model), so "
        "its scaled embeddings have root mean square 1, larger than the encoding.",
        "test_E27_embedding_scale_reason",
    ),
    Erratum(
        "E28",
        "000 (slides), decoder_layer, lines 1314-1322",
        "dropout on the first decoder sublayer",
        "attention1 = tf.keras.layers.LayerNormalization(epsilon=1e-6)(attention1 + inputs)  # no Dropout",
        "attention1 = LayerNormalization(epsilon=1e-6)(inputs + Dropout(rate=dropout)(attention1))",
        "Sec. 5.4: 'We apply dropout to the output of each sub-layer, before it is added to the sub-layer "
        "input and normalized.' 000 does so after both sublayers of its encoder layer and after the decoder's "
        "encoder-decoder attention and feed-forward network, but not after the masked self-attention: one "
        "of the decoder's three sublayers trains without its dropout.",
        "test_E28_dropout_on_every_sublayer",
    ),
    Erratum(
        "E29",
        "000 (slides), Part 1 '기존 연구의 한계점', line 58",
        "why not CNNs",
        "CNN: 'Kernel 간의 정보 공유 불가' (no information sharing between kernels)",
        "Sec. 4 and Table 1: a convolution of width k < n connects only nearby positions, so connecting all "
        "pairs takes O(n/k) layers (contiguous kernels) or O(log_k(n)) (dilated), lengthening the paths "
        "between distant positions, and a convolutional layer costs O(k n d^2), a factor k more than a "
        "recurrent one; self-attention connects every pair in one layer",
        "The kernels of a convolution do share information: every output channel reads every input "
        "channel, and the next layer reads all of them. The paper's case against CNNs for sequences is path "
        "length (long-range dependencies need a stack of layers) and cost, not isolated kernels.",
        "test_E29_convolution_path_length",
    ),
    Erratum(
        "E30",
        "003 (book notes), line 88",
        "self-attention is not sequential",
        "'모델은 가장 먼저 단어 A에 대한 표현을 계산하고 그 다음 dog 그 다음 ate 표현을 계산한다' (the model "
        "first computes the representation of A, then dog, then ate)",
        "all positions are computed together from the whole sentence: softmax(QK^T / sqrt(d_k)) V is one "
        "matrix product over all the queries ('we compute the attention function on a set of queries "
        "simultaneously', Sec. 3.2.1)",
        "No position waits for another: a position's output is the same whether the positions are computed "
        "together, one by one or last to first, and the first word's representation already depends on the "
        "last word. Reading word by word is what the recurrent models of week 1 do; doing away with it is "
        "the point of Sec. 4 (O(1) sequential operations instead of O(n)). Only decoding at inference "
        "produces the target one token at a time.",
        "test_E30_all_positions_at_once",
    ),
    Erratum(
        "E31",
        "002 (notebook), train_step and eval_step, lines 324 and 419",
        "the printed batch loss",
        "batch_loss = (loss / int(tgt.shape[1]))",
        "divide the summed loss by the number of real target tokens (the mask summed over tgt[:, 1:]) for a "
        "per-token mean, or print loss itself, the summed loss per sentence",
        "loss, the sum of the per-step means over the T - 1 steps t = 1 .. T - 1 (E12), does not depend on "
        "the padding; divided by the padded width T it does. The printed number is neither the mean per "
        "step (there are T - 1 steps) nor per token, and it shrinks as T grows. The notes pad the whole data "
        "set to its longest target (pad_sequences without maxlen), so every batch is divided by that one T: "
        "one longer sentence anywhere in the corpus lowers every printed loss, training and test, while the "
        "training itself (the gradient of loss) is unchanged. Such numbers cannot be compared across data "
        "sets or with a per-token cross-entropy.",
        "test_E31_printed_loss_depends_on_padding",
    ),
    Erratum(
        "E32",
        "000 (slides), encoder() line 1257 and decoder() line 1413; 002 (notebook), encoder(), line 1921",
        "the length of the encoding table",
        "embeddings = PositionalEncoding(vocab_size, d_model)(embeddings)",
        "PositionalEncoding(max_len, d_model): one row per position, up to the longest sequence",
        "The class's first argument is the number of positions ('position'); the vocabulary size has nothing "
        "to do with it. When the vocabulary is smaller than the longest sentence, pos_encoding[:, :T] comes "
        "up short and the addition fails; with the usual larger vocabulary the layer runs but builds "
        "vocab_size rows of which only the first T are ever read.",
        "test_E32_table_sized_by_length",
    ),
    Erratum(
        "E33",
        "002 (notebook), position-wise feed-forward network, line 1863",
        "a line that cannot run",
        "outpus = tf.kears.layers.Dense(units=d_model)(outpus)",
        "outputs = tf.keras.layers.Dense(units=d_model)(outputs)",
        "tf.kears is a typo: TensorFlow has no attribute kears, so the line raises AttributeError. With it "
        "fixed the line raises NameError: outpus (for outputs) is read before it is assigned. Meant is "
        "FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (Eq. (2)), the second Dense applied to the first one's output.",
        "test_E33_tf_kears_cannot_run",
    ),
    Erratum(
        "E34",
        "002 (notebook), MultiHeadAttention.__init__, line 1783",
        "which projection self.dense is",
        "# wQ에 해당하는 dense  /  self.dense = tf.keras.layers.Dense(units=d_model)",
        "# W^O: the output projection (d_model x d_model), applied to the concatenated heads",
        "W^Q is query_dense, three lines above. self.dense is applied in step 5 to concat_attention, under "
        "the class's own comment 'wo에 해당하는 dence층' (line 1825): it is W^O of Sec. 3.2.2, "
        "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O. It does not touch the attention weights, "
        "which W^Q and W^K alone determine.",
        "test_E34_the_wq_comment_names_w_o",
    ),
    Erratum(
        "E35",
        "002 (notebook), train_step, step 1 of its description, line 299",
        "what the context vector is",
        "'Encoder에 소스 문장을 전달해 컨텍스트 벡터인 enc_out을 생성' (the encoder makes the context vector enc_out)",
        "enc_out holds the encoder outputs, one vector h_j per source position; the context vector "
        "c_i = sum_j alpha_ij h_j is computed anew at every decoder step i (Bahdanau et al. 2015, Eq. (5))",
        "'Context vector' is the one fixed vector of the seq2seq model without attention (000 names its fixed "
        "size as the limit of RNNs). With attention there is no single context vector: enc_out (B, T_src, U) "
        "stays the same for the whole sentence, while the context (B, U) changes at every step with the "
        "decoder state. Calling enc_out the context vector hides exactly what attention changed. (The notes' "
        "own context also sums the projected states, E7.)",
        "test_E35_context_vector_is_per_step",
    ),
    Erratum(
        "E36",
        "000 (slides), Decoder, line 1288; transformer(), line 1497",
        "what the model outputs",
        "'2. 출력: 단어의 확률' (output: the probabilities of the words)",
        "the decoder stack outputs d_model-wide vectors; the final Dense(units=vocab_size), with no "
        "activation, turns them into logits; probabilities are softmax(logits), taken inside the loss "
        "(from_logits=True) or when decoding",
        "Fig. 1 ends in Linear and Softmax ('Output Probabilities') and Sec. 3.4 speaks of predicted "
        "next-token probabilities, but 000's code stops at the Linear layer: its outputs are unnormalised "
        "scores, any real numbers, whose rows do not sum to 1. A loss told they are probabilities "
        "(from_logits=False) computes a wrong cross-entropy.",
        "test_E36_outputs_are_logits",
    ),
)
