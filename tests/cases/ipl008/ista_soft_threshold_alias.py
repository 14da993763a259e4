# label: hazard silent
# why: the soft-threshold th.sign(w) * (w.abs() - lam).clamp(min=0.0) sees coefficients with |w| exactly equal to lam (quantised init), where clamp passes gradient 1 and relu passes 0, so the sparse codes get different gradients.
import torch as th

th.manual_seed(0)

D = th.randn(8, 6)
x = th.randn(8)
codes = th.tensor([0.25, -0.25, 0.5, 0.0, -0.75, 0.25], requires_grad=True)
lam = 0.25

shrunk = th.sign(codes) * (codes.abs() - lam).clamp(min=0.0)  # <-- IPL008: |code| == lam gives exactly 0
recon = D @ shrunk
loss = 0.5 * (recon - x).pow(2).sum() + lam * codes.abs().sum()
loss.backward()
code_grad = codes.grad.clone()
