# label: hazard raises
# why: ClampInplace.forward clamps its input in place without ctx.mark_dirty, and that input is the sigmoid output that sigmoid saved, so backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClampInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        mask = (x >= lo) & (x <= hi)
        ctx.save_for_backward(mask)
        x.clamp_(lo, hi)  # <-- IPL005: forward mutates input without mark_dirty
        return x

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None, None


gate_fc = nn.Linear(8, 8)
out_fc = nn.Linear(8, 2)
x = torch.randn(6, 8)
gate = torch.sigmoid(gate_fc(x))
gate = ClampInplace.apply(gate, 0.1, 0.9)
loss = out_fc(gate * x).pow(2).mean()
loss.backward()
