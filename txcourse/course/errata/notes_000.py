"""The errata of source notes 000 (``../shared/seeds/``), in the order of their ids."""

from txcourse.course.errata.erratum import Erratum

ERRATA: tuple[Erratum, ...] = (
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
