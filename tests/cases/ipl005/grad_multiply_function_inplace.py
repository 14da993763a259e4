# label: hazard silent
# why: GradMultiply.backward scales grad_output in place, and that same gradient tensor also flows to the positional embedding.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GradMultiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        grad.mul_(ctx.scale)  # <-- IPL005: grad_output is shared with the other add branch
        return grad, None


class ConvFrontEnd(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.pos = nn.Embedding(max_len, dim)
        self.conv = nn.Conv1d(3, dim, 3, padding=1)
        self.out = nn.Linear(dim, 2)

    def forward(self, audio):
        positions = self.pos(torch.arange(audio.size(-1)).expand(audio.size(0), -1))
        feats = self.conv(audio).transpose(1, 2)
        x = GradMultiply.apply(feats, 0.1) + positions
        return self.out(x)


frontend = ConvFrontEnd(4, 10)
audio = torch.randn(2, 3, 10)
logits = frontend(audio)
loss = logits.pow(2).mean()
loss.backward()
