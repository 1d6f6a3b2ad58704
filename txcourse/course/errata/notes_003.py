"""The errata of source notes 003 (``../shared/seeds/``), in the order of their ids."""

from txcourse.course.errata.erratum import Erratum

ERRATA: tuple[Erratum, ...] = (
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
        "E20",
        "003 (book notes), self-attention step 3",
        "what the softmax normalises",
        "after the softmax 'the sum of all values is 1' (전체 값의 합은 1이 되고)",
        "each row (one query) sums to 1; the T x T matrix sums to T",
        "The softmax runs over the keys, the last axis, separately for every query.",
        "test_E20_softmax_rows_sum_to_one",
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
)
