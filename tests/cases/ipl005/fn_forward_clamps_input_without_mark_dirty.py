# label: hazard raises
# why: forward clamps its input in place without ctx.mark_dirty; the input is tanh's saved output, so backward fails the version check
import torch


class SoftCap(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cap):
        x.clamp_(-cap, cap)  # <-- IPL005
        ctx.save_for_backward(x)
        ctx.cap = cap
        return x * 2.0

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inside = (x.abs() < ctx.cap).to(grad_output.dtype)
        return grad_output * 2.0 * inside, None


torch.manual_seed(0)
feat = torch.randn(3, 5, requires_grad=True)
w = torch.randn(5, 5, requires_grad=True)

act = torch.tanh(feat @ w)
capped = SoftCap.apply(act, 0.5)
loss = capped.pow(2).mean()
loss.backward()

feat_grad = feat.grad
w_grad = w.grad
