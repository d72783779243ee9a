"""PyTorch on the same GPU, for nvf_gpu.sh's pointwise bandwidth figures.

    python3 bench/gpu_peer.py [LOG2N]

Times, on n = 2^LOG2N float32 elements (default 26, nvf_gpu.sh's size) and
with CUDA events (median of 20 timed calls after 3 untimed ones):

  copy           y.copy_(x): the copy bandwidth at this size (8n bytes)
  gelu eager     F.gelu(x, approximate="tanh"): PyTorch's one fused kernel
  gelu graph     the GELU of bench/graphs/gelu_tanh.ir written out, eager
                 (one kernel per op)
  gelu compiled  the same written-out GELU under torch.compile (Inductor's
                 one Triton kernel); skipped with a note when it fails
  softmax        torch.softmax over the last dim of x viewed as [n / 1024, 1024]
  layer_norm     F.layer_norm over the last dim of the same view, with a weight
                 and a bias (their 8 KiB not counted)

GB/s counts each input read once and each output written once (8n bytes for
the GELU rows), the fraction is of the copy row's GB/s in this run. Exits 0
with a note when torch or a CUDA device is missing.
"""
import sys


def main():
    log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 26
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"gpu_peer: no torch here ({e}); skipped")
        return 0
    if not torch.cuda.is_available():
        print("gpu_peer: torch sees no CUDA device; skipped")
        return 0
    n = 1 << log2n
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(n, device=dev, generator=g)
    y = torch.empty_like(x)

    def gelu_graph(t):
        return t * 0.5 * ((t + t * 0.044715 * t * t) * 0.7978845608028654).tanh().add(1.0)

    def timed(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ms = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
        ms.sort()
        return ms[len(ms) // 2]

    rows = [("copy", lambda: y.copy_(x)),
            ("gelu eager", lambda: F.gelu(x, approximate="tanh")),
            ("gelu graph", lambda: gelu_graph(x))]
    x2 = x.view(n // 1024, 1024)
    w = torch.randn(1024, device=dev, generator=g)
    bias = torch.randn(1024, device=dev, generator=g)
    rows.append(("softmax", lambda: torch.softmax(x2, -1)))
    rows.append(("layer_norm", lambda: F.layer_norm(x2, (1024,), w, bias, 1e-5)))
    try:
        compiled = torch.compile(gelu_graph)
        compiled(x)
        rows.append(("gelu compiled", lambda: compiled(x)))
    except Exception as e:  # Inductor needs a working Triton; the other rows stand alone
        print(f"gpu_peer: torch.compile failed ({type(e).__name__}: {str(e)[:200]}); row skipped")
    print(f"gpu_peer: torch {torch.__version__} on {torch.cuda.get_device_name()}, n = 2^{log2n} float32")
    copy_gbs = None
    for name, fn in rows:
        ms = timed(fn)
        gbs = 8 * n / (ms / 1e3) / 1e9
        if copy_gbs is None:
            copy_gbs = gbs
        print(f"  {name:14s} {ms:8.4f} ms  {gbs:7.0f} GB/s  {gbs / copy_gbs:5.2f} of copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
