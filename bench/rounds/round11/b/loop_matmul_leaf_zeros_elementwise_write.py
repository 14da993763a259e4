# label: hazard raises
# why: the accumulator is created with torch.zeros(..., requires_grad=True), so it is a leaf that requires grad, and the hand-written matmul loop writes every output element into it in place.
# source: https://github.com/pytorch/pytorch/issues/53348
import torch

torch.manual_seed(0)

ma = torch.randn(2, 2, 3, 4).requires_grad_(True)
mb = torch.randn(2, 2, 4, 3).requires_grad_(True)
B, C, H, W = ma.shape
_, _, _, K = mb.shape

res_torch = torch.zeros((B, C, H, K), requires_grad=True)
for b in range(B):
    for c in range(C):
        for h in range(H):
            for k in range(K):
                acc = res_torch[b, c, h, k]
                for r in range(W):
                    acc = acc + ma[b, c, h, r] * mb[b, c, r, k]
                res_torch[b, c, h, k] = acc  # <-- IPL003: element write into a leaf created with requires_grad=True

loss = res_torch.sum()
loss.backward()
ma_grad = ma.grad
