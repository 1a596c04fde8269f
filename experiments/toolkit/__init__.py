"""The shared toolkit: what every lesson may build on, between the ledger engine and the lessons.

Layers, lowest first; a module imports only from its own layer or below, and a lesson never imports another
lesson (tests/test_layers.py holds this, lazy imports inside functions included):

    experiments.errors, errors_zh, expr, format, labels, numbers, widget, exercise   values, text, declarations
    experiments.ledger                                                      the engine (config.json -> ledger)
    experiments.baseline                                                    the numpy baseline model
    experiments.train                                                       the numpy trainer (model, optimisers)
    experiments.toolkit                                                     this package
    experiments.lessons.<lesson>                                            one lesson's numbers, views, calculators
    experiments.lessons, course_numbers, api                                discovery, the course's numbers, the browser

    inputs.py         a learner's typed value -> an exact int or Fraction, or a Chinese message naming the field
    config_text.py    a pasted config.json -> the config, or a Chinese message; a config or its text -> its
                      ledger; the text model's keys of a nested (multimodal) config
    decode.py         bytes per weight, the weights one decode step of B tokens reads (routed experts touched)
    moe.py            a MoE config's expert count, top-k and expert width, changed through the engine's MoE facts
    model_numbers.py  every model's generic numbers (totals, shares, classic estimate, crossover, KV cache)
    shared_numbers.py the few numbers several lessons cite, so that no lesson needs another one's
    derivations.py    a config's generic numbers with the derivation rows a page shows
    scaling.py        published scaling-law fits, compute-optimal N and D, training FLOPs per token beyond 6N
    devices.py        the GPUs memory is weighed against, each with the bytes its driver reports and where that
                      figure comes from; the one unit rule of every "does it fit" (bytes against those bytes);
                      bandwidth and dense BF16/FP8 FLOP/s from the datasheets; the links between GPUs (NVLink
                      inside a node, the network between nodes) per GPU and direction, with their sources
    serving.py        inference (C14): decode and prefill rooflines, the batch where decode turns compute-bound,
                      KV cache beside the weights (paged), MoE experts a batch reads, BF16/FP8/INT8/INT4 weights
    parallel.py       parallel training (C10): ring collectives' bytes, ZeRO/TP/PP/EP/CP bytes per step, the
                      pipeline bubble, EP's all-to-all per token, memory per GPU, a time model (step time, MFU)
                      and a planner of the layouts that fit, fastest first
    ranks.py          one step of the course's trainer split over k simulated ranks in one process (data
                      parallel, ZeRO-3, tensor parallel), ring collectives with every byte counted (needs numpy)
    live_run.py       a training run in the page advanced a few steps per request (C2's speaker, C3's mask switch)
    stored.py         a widget's derived data file (the stored runs, the measured step), or its error naming the
                      command that makes it
"""
