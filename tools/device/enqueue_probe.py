"""How long the host takes to enqueue a CUDA call right after the benchmark's L2 flush and a GPU
spin of P us: does an enqueue wait for the GPU? torch's x.add_ (an elementwise kernel), a bf16
matmul (cuBLAS), and our dualgemm kernel through its C entry point.
    python3 tools/device/enqueue_probe.py LIB   # liboverlap_dualgemm_capi.so"""
import statistics
import sys
import time

import torch

sys.path.insert(0, "bench/gpu")
from bench_common import L2Flush  # noqa: E402
from bench_dualgemm import OverlapLib, make_inputs, torch_fp8  # noqa: E402

lib = OverlapLib(sys.argv[1])
x = torch.ones(1024, device="cuda")
s0 = make_inputs((256, 3072, 4096), 0, 1)
s1 = make_inputs((256, 3072, 4096), 1, 2)
c = torch.empty(256, 3072, device="cuda", dtype=torch.float16)
calls = {
    "x.add_": lambda: x.add_(1.0),
    "bf16 matmul": lambda: s0["a"] @ s0["b1"].t(),
    "torch fp8 path": lambda: torch_fp8(s1),
    "ours fp8": lambda: lib.forward("tile128x48_stages7_ws_tmastore_es_lean", 1, s1, c),
}
flush = L2Flush("read")
for name, call in calls.items():
    for pad_us in (0, 200, 1000):
        host = []
        for i in range(30):
            flush()
            torch.cuda._sleep(int(pad_us * 2000))
            t0 = time.perf_counter()
            call()
            host.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        print(f"{name:>15} pad {pad_us:5d} us: enqueue median {statistics.median(host[5:]):7.1f} us, max {max(host[5:]):7.1f}")
