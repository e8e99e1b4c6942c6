package main

// Cost counts what context management makes the engine do: every prompt
// token it processes (prefill), and every token it generates for context
// management (reika's note rounds, the peers' summaries), each generated
// token counted as genWeight prefilled ones. The session's own replies
// are the same for every policy and the lower bound, and left out.
//
// The weight is llama.cpp's own ratio of prompt to generation speed,
// prompt_per_second / predicted_per_second in llama-server's timings, or
// pp512 / tg128 in llama-bench's. For an 8B model at Q4_K_M (the class
// the bench's host memory assumes), llama-bench gives:
//
//   - Apple M4 (Metal): pp512 224.8 t/s, tg128 20.9 t/s: 10.8×;
//   - Apple M1 Max (Metal): pp512 499.6, tg128 46.2: 10.8×;
//   - Apple M2 Max, CPU only (Llama 3.1 8B, IQ4_KT): pp512 125.2, tg128
//     9.7: 12.9×.
//
// (normiebench results #3 and #40; ik_llama.cpp pull request 544.) Those
// are the machines a local 8B runs on without a discrete GPU; on one the
// prompt runs far faster still against generation, and generation weighs
// more. The default is the low end of these, 10: a run with -gen-weight 40 (the fake engine's own timings, used for
// the engine seconds) or more shows a GPU user's view, and the per-session
// figures in -json (prefill, summaryTokens, lowerBound) give the cost at
// any weight.
const defaultGenWeight = 10.0

// genWeight is the run's weight (-gen-weight).
var genWeight = defaultGenWeight
