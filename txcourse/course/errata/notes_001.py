"""The errata of source notes 001 (``../shared/seeds/``), in the order of their ids."""

from txcourse.course.errata.erratum import Erratum

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
)
