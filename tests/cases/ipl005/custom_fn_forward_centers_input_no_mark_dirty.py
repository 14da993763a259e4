# label: hazard raises
# why: the custom forward subtracts the mean from its input in place without ctx.mark_dirty, clobbering the sigmoid output that SigmoidBackward saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenterScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gain):
        x.sub_(x.mean(dim=-1, keepdim=True))  # <-- IPL005
        ctx.save_for_backward(x, gain)
        return x * gain

    @staticmethod
    def backward(ctx, grad_output):
        x, gain = ctx.saved_tensors
        n = x.shape[-1]
        gx = grad_output * gain
        gx = gx - gx.mean(dim=-1, keepdim=True)
        ggain = (grad_output * x).sum(dim=0)
        return gx, ggain


layer = nn.Linear(5, 6)
gain = torch.ones(6, requires_grad=True)
inp = torch.randn(4, 5)

gate = torch.sigmoid(layer(inp))
out = CenterScale.apply(gate, gain)
loss = out.pow(2).mean()
loss.backward()
