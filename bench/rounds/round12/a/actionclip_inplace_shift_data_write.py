# label: hazard silent
# why: the in-place temporal shift Function rewrites input.data inside forward without mark_dirty, while the preceding ReLU saved that same tensor, so the ReLU backward uses shifted activations and the gradients are wrong
# source: https://github.com/sallymmx/ActionCLIP/blob/a06b48d7eedd8c4ee786e29857451ad046e967a7/modules/temporal_shift.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class InplaceShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, fold):
        ctx.fold_ = fold
        n, t, c, h, w = input.size()
        buffer = input.data.new(n, t, fold, h, w).zero_()
        buffer[:, :-1] = input.data[:, 1:, :fold]
        input.data[:, :, :fold] = buffer  # <-- IPL005, IPL007: mutates the input (a saved ReLU output) through .data without mark_dirty
        buffer.zero_()
        buffer[:, 1:] = input.data[:, :-1, fold: 2 * fold]
        input.data[:, :, fold: 2 * fold] = buffer  # <-- IPL005, IPL007: mutates the input (a saved ReLU output) through .data without mark_dirty
        return input

    @staticmethod
    def backward(ctx, grad_output):
        fold = ctx.fold_
        n, t, c, h, w = grad_output.size()
        buffer = grad_output.data.new(n, t, fold, h, w).zero_()
        buffer[:, 1:] = grad_output.data[:, :-1, :fold]
        grad_output.data[:, :, :fold] = buffer
        buffer.zero_()
        buffer[:, :-1] = grad_output.data[:, 1:, fold: 2 * fold]
        grad_output.data[:, :, fold: 2 * fold] = buffer
        return grad_output, None


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div

    def forward(self, x):
        nt, c, h, w = x.size()
        n_batch = nt // self.n_segment
        x5 = x.view(n_batch, self.n_segment, c, h, w)
        fold = c // self.fold_div
        out = InplaceShift.apply(x5, fold)
        return self.net(out.view(nt, c, h, w))


stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
block = TemporalShift(nn.Conv2d(8, 8, 3, padding=1), n_segment=4, n_div=4)
head = nn.Linear(8, 5)

frames = torch.randn(2 * 4, 3, 6, 6)
feat = stem(frames)
feat = block(feat)
logits = head(feat.mean(dim=(2, 3)).view(2, 4, 8).mean(1))
loss = nn.functional.cross_entropy(logits, torch.tensor([1, 3]))
loss.backward()
