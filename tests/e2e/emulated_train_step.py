"""The train-step oracle on the emulated GPU node (tests/emulated_gpu; docs/cuda.md, "The emulated GPU
node"): a train-step row's step time, tokens/s, MFU and compute phase computed from the GPU model and
the transformer's architecture, never from gpuscale's output. e2e_cuda_emulated.py's check_rows and
e2e_cuda_emulated_findings.py's train_step case judge rows with it.

What it derives, and from where:
  - The model: the preset's published shapes (PRESETS, the configs docs/training.md cites) or the
    user's model file, shrunk as --quick and --layers say (docs/training.md, "Models"). Only the inputs
    a user gives are read (the run's --model, --quick, --layers, --layout and the GPU count); the row's
    own parameters are compared with the derived model, never used to build it.
  - The program each rank runs (docs/training.md, "What runs"): per micro-batch of T = seq x
    micro_batch tokens, each layer's GEMMs of its TP shard (forward QKV, the two attention products of
    seq x seq over head_dim x heads/tp x micro_batch, the output projection, the MLP's gate+up and
    down; backward the input and weight gradient of each, twice the forward's FLOPs), the TP
    all_reduce after attention and after the MLP (forward and backward), FSDP's all_gather of the
    layer's parameter shard before its forward and its backward, the vocabulary projection (forward and
    backward) on the last pipeline stage, the PP sendrecv of T x h activations before and of their
    gradients after; after the micro-batches FSDP's reduce_scatter per layer and one DP all_reduce of
    the gradients the rank holds. m = 2 pp micro-batches under a pipeline, else 1 (weak scaling).
  - Each op's time on the emulated node, as its libraries charge it:
      GEMM   (kernels/cuda/cuda_gemm.cpp run_one: an event, one cublasLtMatmul, an event, a wait): the
             launch overhead the host pays for the matmul, then 2 m n k at the type's dense peak x
             gemm_efficiency (tests/emulated_gpu/cublaslt/lt_cost.h, no kernel floor);
      collective (collectives/nccl/nccl_communicator.cpp time(1): one NCCL call, a wait): each member
             posts where it stands on its clock, pays the launch overhead, and the operation ends at
             max(its own start after the launch, the latest member's posted start) plus the ring
             model's duration (tests/emulated_gpu/nccl/collective_model.cpp, and
             nccl/collective_exchange.cpp, p2p_exchange.cpp: a sendrecv's peers are its two neighbours);
             the first operation on a communicator pays the lazy connection (a warm-up step's);
      every op ends in a wait, so the host and every stream of the rank stand at the same clock after
      it: one clock per rank is the whole state (core/clock.cpp).
  - The step (harness/benchmarks/train_step/train_step_measure.cpp: the device clock read after
    every stream finished, before and after the program), simulated for every rank of the group over
    the warm-up and timed steps together, since a rank's clock at a collective depends on its peers';
    the group's step is its slowest rank's, the row's the median over the repetitions; the bubble is
    (pp - 1) / m of the slowest rank's GEMM time (Narayanan et al. 2021), added to the step; tokens/s =
    D x m x T / step; MFU = tokens/s x FLOPs per token (6 N_active + 12 layers h seq, PaLM appendix B)
    / (GPUs x the type's dense peak).

Not covered (the oracle refuses such a row, so check_rows fails on it rather than passing it unjudged):
mixture-of-experts models and ep layouts (alltoallv's Zipf counts), strong scaling, and groups across
hosts.
"""
import json
import os
import statistics

# The presets' published shapes (docs/training.md, "Models": each model's config.json).
PRESETS = {
    "llama3-8b": dict(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, seq=8192, micro_batch=1, vocab=128256),
    "llama3-70b": dict(layers=80, hidden=8192, ffn=28672, heads=64, kv_heads=8, seq=8192, micro_batch=1, vocab=128256),
    "mixtral-8x7b": dict(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, seq=4096, micro_batch=1, vocab=32000,
                         experts=8, top_k=2),
}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "tf32": 4, "fp8_e4m3": 1, "fp8_e5m2": 1, "int8": 1}
SHAPE_KEYS = ("layers", "hidden", "ffn", "heads", "kv_heads", "seq", "micro_batch", "vocab")


class NoOracle(Exception):
    """A row this oracle does not model (the caller fails on it: a row is judged or the run fails)."""


def shrink(model, quick, layers):
    """--quick (docs/training.md: width, MLP, heads and vocabulary / 16, at least one head, KV heads in
    their ratio to the heads and dividing them, the width a multiple of the heads; at most 2 layers,
    sequence 128, micro-batch 1) and --layers N."""
    m = dict(model)
    if quick:
        heads = max(1, m["heads"] // 16)
        kv = max(1, m["kv_heads"] * heads // m["heads"])
        while heads % kv:
            kv -= 1
        m.update(hidden=max(heads, max(1, m["hidden"] // 16) // heads * heads), ffn=max(1, m["ffn"] // 16), heads=heads,
                 kv_heads=kv, vocab=max(1, m["vocab"] // 16), layers=min(m["layers"], 2), seq=min(m["seq"], 128),
                 micro_batch=1)
    if layers:
        m["layers"] = layers
    return m


def model_for(row, options):
    """The row's model from what the user gave: a preset by name or one of the model files, shrunk by
    --quick and --layers. A file's row is named "file": the file whose shapes the row reports is it (the
    files are the candidates; the row only picks among them)."""
    name = row["params"]["name"]
    if name in PRESETS:
        cands = [dict(PRESETS[name], dtype="bf16")]
    else:
        cands = []
        for path in options.get("models") or []:
            if path in PRESETS or not os.path.exists(path):
                continue
            with open(path) as f:
                j = json.load(f)
            j.setdefault("kv_heads", j["heads"])
            j.setdefault("micro_batch", 1)
            j.setdefault("dtype", "bf16")
            cands.append(j)
    models = [shrink(c, options.get("quick"), options.get("layers")) for c in cands]
    for m in models:
        if all(row["params"].get(k) == m[k] for k in SHAPE_KEYS) and row["params"].get("dtype") == m["dtype"]:
            return m
    raise NoOracle(f"no model of the run's inputs ({options.get('models')}, quick {options.get('quick')}, layers "
                   f"{options.get('layers')}) has the row's shapes: derived {models}")


def resolve_layout(text, n):
    """The layout at n GPUs (docs/training.md, "Layouts"): tp and pp fixed, dp or fsdp without a number
    takes the GPUs they leave (dp when neither is named)."""
    sizes = {"tp": 1, "pp": 1, "ep": 1}
    grows, fixed_d = "dp", {}
    for part in text.split(","):
        key, _, val = part.partition("=")
        if key in ("tp", "pp", "ep"):
            sizes[key] = int(val)
        elif val:
            fixed_d[key] = int(val)
        else:
            grows = key
    fixed = sizes["tp"] * sizes["pp"] * fixed_d.get("dp", 1) * fixed_d.get("fsdp", 1)
    if n % fixed:
        return None
    sizes["dp"] = fixed_d.get("dp", n // fixed if grows == "dp" else 1)
    sizes["fsdp"] = fixed_d.get("fsdp", n // fixed if grows == "fsdp" else 1)
    return sizes


def place(l, rank):
    """Megatron-LM's order (docs/training.md, training/parallel_layout.h): rank = tp_rank + tp (d + D
    pp_rank), d = fsdp_rank + fsdp dp_rank."""
    D = l["dp"] * l["fsdp"]
    d = (rank // l["tp"]) % D
    return {"tp": rank % l["tp"], "pp": rank // (l["tp"] * D), "fsdp": d % l["fsdp"], "dp": d // l["fsdp"]}


def group_of(l, rank, dim):
    """The ranks of rank's group along dim: every coordinate but dim's the same as rank's."""
    me = place(l, rank)
    n = l["dp"] * l["fsdp"] * l["tp"] * l["pp"]
    return tuple(r for r in range(n) if all(place(l, r)[k] == me[k] for k in me if k != dim))


def attention_params(m):
    kv = m["kv_heads"] * (m["hidden"] // m["heads"])
    return m["hidden"] * (m["hidden"] + 2 * kv) + m["hidden"] * m["hidden"]  # Q, K, V and the output


def flops_per_token(m):
    """6 N_active + 12 layers h seq (PaLM, appendix B): N_active every layer's attention and MLP (3 h f,
    SwiGLU) and the output projection once."""
    active = m["layers"] * (attention_params(m) + 3 * m["hidden"] * m["ffn"]) + m["hidden"] * m["vocab"]
    return 6 * active + 12 * m["layers"] * m["hidden"] * m["seq"]


def program(m, l, rank):
    """Rank's ops of one step, in order: ("gemm", flops) or ("comm", dim, collective, bytes)."""
    tp, h, f, es = l["tp"], m["hidden"], m["ffn"], DTYPE_BYTES[m["dtype"]]
    t = m["seq"] * m["micro_batch"]
    head_dim = h // m["heads"]
    kv_local = m["kv_heads"] * head_dim // tp if m["kv_heads"] % tp == 0 else head_dim  # replicated past the KV heads
    core_k = head_dim * (m["heads"] // tp) * m["micro_batch"]
    layer_shard = attention_params(m) // tp + 3 * h * f // tp  # what FSDP gathers: the layer's TP shard
    ops = []

    def linear(n_in, n_out, tokens, backward):  # forward W X; backward dX = W^T dY and dW = dY X^T: twice
        ops.extend([("gemm", 2.0 * n_in * n_out * tokens)] * (2 if backward else 1))

    def comm(dim, coll, nbytes):
        if l[dim] > 1 and nbytes > 0:  # a group of one rank runs nothing
            ops.append(("comm", dim, coll, nbytes))

    def attention(backward):  # QKV, the scores and their weighting (seq x seq over core_k each), the output
        linear(h, h // tp + 2 * kv_local, t, backward)
        ops.extend([("gemm", 2.0 * m["seq"] * m["seq"] * core_k)] * (4 if backward else 2))
        linear(h // tp, h, t, backward)
        comm("tp", "all_reduce", t * h * es)

    def mlp(backward):  # SwiGLU: gate and up in one GEMM, then down
        linear(h, 2 * f // tp, t, backward)
        linear(f // tp, h, t, backward)
        comm("tp", "all_reduce", t * h * es)

    def layer(backward):
        comm("fsdp", "all_gather", layer_shard * es)
        # Backward runs the blocks in reverse; inside a block the GEMMs' order does not change the time
        # (each op waits for the one before), so only where the all_reduces fall matters.
        for block in ((mlp, attention) if backward else (attention, mlp)):
            block(backward)

    layers = m["layers"] // l["pp"]
    last = place(l, rank)["pp"] == l["pp"] - 1
    micro = 2 * l["pp"] if l["pp"] > 1 else 1
    for _ in range(micro):
        comm("pp", "sendrecv", t * h * es)
        for _ in range(layers):
            layer(False)
        if last:
            linear(h, m["vocab"] // tp, t, False)
            linear(h, m["vocab"] // tp, t, True)
        for _ in range(layers):
            layer(True)
        comm("pp", "sendrecv", t * h * es)
    for _ in range(layers):
        comm("fsdp", "reduce_scatter", layer_shard * es)
    held = layers * layer_shard // l["fsdp"] + (h * m["vocab"] // tp if last else 0)  # after the reduce_scatter
    comm("dp", "all_reduce", held * es)
    return ops, micro


def nccl_size(coll, nbytes, es, n):
    """nccl-tests' size of the operation gpuscale requests for `nbytes` (collectives/collective_table.h):
    whole elements; all_gather and reduce_scatter a per-rank count rounded down to 16 bytes."""
    count = nbytes // es
    if coll in ("all_gather", "reduce_scatter"):
        per = 1 if es >= 16 else 16 // es
        return count // n // per * per * n * es
    return count * es


def simulate(gpu, m, l, warmup, reps, op_us, offsets):
    """Every rank's clock (us) through warm-up and timed steps. op_us(coll, n, size_bytes) is the
    emulated NCCL's duration. `offsets`: each rank's clock when the point starts (its setup's length is
    not modelled; the caller tries several). Returns each timed step's (durations, compute) per rank."""
    n = l["dp"] * l["fsdp"] * l["tp"] * l["pp"]
    L = gpu["launch_overhead_us"]
    rate = gpu["tflops"][m["dtype"]] * 1e12 * gpu["gemm_efficiency"]
    es = DTYPE_BYTES[m["dtype"]]
    progs = [program(m, l, r)[0] for r in range(n)]
    clock = list(offsets)
    connected = set()
    steps = []
    for _ in range(warmup + reps):
        start, compute = list(clock), [0.0] * n
        at = [0] * n
        seq = {}  # (group, its k-th operation) -> {rank: posted start}
        done_count = [{} for _ in range(n)]
        while any(at[r] < len(progs[r]) for r in range(n)):
            moved = False
            for r in range(n):
                while at[r] < len(progs[r]) and progs[r][at[r]][0] == "gemm":
                    d = L + progs[r][at[r]][1] / rate * 1e6
                    clock[r] += d
                    compute[r] += d
                    at[r] += 1
                    moved = True
                if at[r] == len(progs[r]):
                    continue
                _, dim, coll, nbytes = progs[r][at[r]]
                g = group_of(l, r, dim)
                k = done_count[r].get(g, 0)
                posted = seq.setdefault((g, k), {})
                if r not in posted:
                    posted[r] = clock[r]  # where it stands before the launch
                    moved = True
                if len(posted) < len(g):
                    continue
                # Every member has posted: each ends at max(its start after the launch, the latest peer's) + the op.
                size = nccl_size(coll, nbytes, es, len(g))
                dur = op_us(coll, len(g), size)
                if g not in connected:
                    dur_first = dur + gpu["collective_connect_us"]
                for q in g:
                    i = g.index(q)
                    peers = (g[(i + 1) % len(g)], g[(i - 1) % len(g)]) if coll == "sendrecv" else g
                    latest = max(posted[p] for p in peers + (q,))
                    clock[q] = max(posted[q] + L, latest) + (dur if g in connected else dur_first)
                    at[q] += 1
                    done_count[q][g] = k + 1
                connected.add(g)
                moved = True
            if not moved:
                raise NoOracle("the simulated program deadlocked: its collectives do not match across ranks")
        steps.append(([clock[r] - start[r] for r in range(n)], compute))
    return steps[warmup:]


def oracle(gpu, row, options, op_us):
    """The row's figures on the model: a list of candidates, each {measured_step_us, step_time_us,
    tokens_per_s, fraction_of_peak, compute_us}. Several where the group's ranks tie for the slowest
    (gpuscale then reports the phases of whichever rank its clock readings put first: equal on the
    model, their last bits decide) and their compute differs (a pipeline's last stage runs the output
    projection): the bubble is (pp - 1) / m of that rank's compute."""
    p = row["params"]
    if row.get("nodes", 1) != 1:
        raise NoOracle("train-step across hosts")
    if p.get("scaling", "weak") != "weak":
        raise NoOracle("strong scaling")
    m = model_for(row, options)
    if m.get("experts") or "ep=" in p["layout"]:
        raise NoOracle("mixture-of-experts and ep layouts (alltoallv's skewed counts)")
    n = row["gpu_count"]
    l = resolve_layout(p["layout"], n)
    if l is None:
        raise NoOracle(f"layout {p['layout']} at {n} GPUs")
    micro = program(m, l, 0)[1]
    warmup = options.get("warmup") if options.get("warmup") is not None else (1 if options.get("quick") else 3)
    reps = options.get("reps") if options.get("reps") is not None else (3 if options.get("quick") else 5)
    if warmup < 1:
        raise NoOracle("no warm-up step: the timed steps would hold the communicators' lazy connection")
    # The ranks' clocks when the point starts depend on their setup (each times its own GEMMs' algorithms
    # first), which is not modelled: the timed steps must come out the same from every start tried.
    L = gpu["launch_overhead_us"]
    starts = [[0.0] * n, [1e5 * r for r in range(n)], [1e5 * (n - r) for r in range(n)], [0.5 * L * r for r in range(n)]]
    outcomes = set()
    for offsets in starts:
        steps = simulate(gpu, m, l, warmup, reps, op_us, offsets)
        group = [max(d) for d, _ in steps]
        tie = [tuple(r for r in range(n) if abs(d[r] - max(d)) <= 1e-9 * max(d)) for d, _ in steps]
        slow_compute = [frozenset(c[r] for r in t) for (_, c), t in zip(steps, tie)]
        if any(s != slow_compute[0] for s in slow_compute):
            raise NoOracle("the slowest rank's compute differs between the timed steps")
        outcomes.add((round(statistics.median(group), 6), tuple(sorted(round(c, 6) for c in slow_compute[0]))))
    if len(outcomes) != 1:
        raise NoOracle(f"the step depends on the ranks' clocks at the start, which the model does not know: {outcomes}")
    measured, computes = outcomes.pop()
    tokens = l["dp"] * l["fsdp"] * micro * m["seq"] * m["micro_batch"]
    peak = gpu["tflops"][m["dtype"]] * 1e12
    out = []
    for compute in computes:
        step = measured + (l["pp"] - 1) / micro * compute
        tps = tokens / (step * 1e-6)
        out.append({"measured_step_us": measured, "step_time_us": step, "tokens_per_s": tps,
                    "fraction_of_peak": tps * flops_per_token(m) / (n * peak), "compute_us": compute})
    return out
