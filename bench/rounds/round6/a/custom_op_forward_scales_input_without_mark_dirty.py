# label: hazard raises
# why: CustomOp.forward scales its input in place and returns it without ctx.mark_dirty, so the output is treated as a view of the input created inside a custom Function and the later in-place `logits *= self.s` is forbidden
# source: https://github.com/pytorch/pytorch/issues/30454
import torch
import torch.nn as nn

torch.manual_seed(0)


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0  # <-- IPL005: mutates the input in forward without ctx.mark_dirty and returns it
        return x

    @staticmethod
    def backward(ctx, grad_output):
        print('Running in backward...')
        grad_output *= 2.0  # <-- IPL005: edits grad_output in place
        return grad_output


def custom_op(x):
    return CustomOp.apply(x)


class Net(nn.Module):
    def __init__(self, in_channel, out_channel, scale=400.0):
        super(Net, self).__init__()
        self.fc = nn.Linear(in_channel, out_channel)
        self.s = scale

    def forward(self, input):
        x = self.fc(input)
        logits = custom_op(x)
        # logits = logits * self.s
        logits *= self.s
        return logits


bs = 4
in_channel = 8
out_channel = 6
dummy_x = torch.rand(bs, in_channel)

net = Net(in_channel, out_channel)
x = net(dummy_x)
x.mean().backward()
