"""A small GLA layer whose attention is `chunk_gla` from either overlap.ops or
flash-linear-attention: the swap is the import, nothing else changes. Checks that the two agree
and times the layer forward with each (CUDA events, median of repeats). Needs a CUDA GPU and, for
the comparison, flash-linear-attention (pip install flash-linear-attention).

    python examples/gla_layer_vs_fla.py [--B 8 --T 4096 --d 2048 --H 16]
"""
import argparse

import torch
import torch.nn.functional as F

from overlap.ops import chunk_gla as overlap_chunk_gla

try:
    from fla.ops.gla import chunk_gla as fla_chunk_gla
except ImportError:
    fla_chunk_gla = None


class GlaLayer(torch.nn.Module):
    """q, k, v, gate projections -> chunk_gla -> output projection (forward only)."""

    def __init__(self, d, H, chunk_gla):
        super().__init__()
        self.H, self.chunk_gla = H, chunk_gla
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.gate = torch.nn.Linear(d, d, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.H, -1) for t in self.qkv(x).chunk(3, dim=-1))
        g = (F.logsigmoid(self.gate(x).float()) / 16).view(B, T, self.H, -1)  # log forget gate, as GLA's
        o, _ = self.chunk_gla(q, k, v, g)
        return self.out(o.reshape(B, T, d))


def median_ms(fn, reps=20):
    fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--B", type=int, default=8)
    p.add_argument("--T", type=int, default=4096)
    p.add_argument("--d", type=int, default=2048)
    p.add_argument("--H", type=int, default=16)
    a = p.parse_args()
    torch.manual_seed(0)
    ours = GlaLayer(a.d, a.H, overlap_chunk_gla).cuda().bfloat16()
    x = torch.randn(a.B, a.T, a.d, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        y = ours(x)
        print(f"B={a.B} T={a.T} d={a.d} H={a.H} (head dim {a.d // a.H})")
        print(f"overlap.ops.chunk_gla layer: {median_ms(lambda: ours(x)):.3f} ms")
        if fla_chunk_gla is None:
            print("flash-linear-attention is not installed: no comparison")
            return
        theirs = GlaLayer(a.d, a.H, fla_chunk_gla).cuda().bfloat16()
        theirs.load_state_dict(ours.state_dict())
        y_fla = theirs(x)
        print(f"fla chunk_gla layer:         {median_ms(lambda: theirs(x)):.3f} ms")
        rel = (y.double() - y_fla.double()).norm() / y_fla.double().norm()
        print(f"layer output, overlap vs fla: relative error {rel:.2e}")


if __name__ == "__main__":
    main()
