# label: safe
# why: in the patched pool Function's backward, grad_input_ *= input_ scales a fresh gradient returned by autograd.grad, not grad_output or a saved tensor, so nothing else observes the write
# source: https://github.com/facebookresearch/TorchRay/issues/20
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _patch_pool(pool, enable=True):
    def forward(ctx, input, *args, **kwargs):
        ctx.save_for_backward(input)
        ctx.args = args
        ctx.kwargs = kwargs
        return pool(input, *ctx.args, **ctx.kwargs)

    def backward(ctx, grad_output):
        if not ctx.needs_input_grad[0]:
            return None,
        input_ = ctx.saved_tensors[0].detach()
        input_.requires_grad_(True)
        with torch.enable_grad():
            # 1. forward pass.
            output_ebp = pool(input_, *ctx.args, **ctx.kwargs)
            # 2. normalize gradient by the output of the forward pass.
            if enable:
                grad_output = grad_output / (output_ebp + 1e-20)
            # 3. do backward pass.
            grad_input_ = torch.autograd.grad(output_ebp, input_, grad_output, only_inputs=True)[0]
            # 4. multiply gradient with layer's input.
            if enable:
                grad_input_ *= input_
            return grad_input_, None, None, None, None, None, None

    autograd_pool = type('EBP_pool', (torch.autograd.Function,), {
        'forward': staticmethod(forward),
        'backward': staticmethod(backward),
    })
    return autograd_pool.apply


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = _patch_pool(F.adaptive_avg_pool2d)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = self.pool(x, 1).flatten(1)
        return self.fc(x)


model = SmallNet()
x = torch.rand(2, 3, 5, 5, requires_grad=True)
out = model(x)
gradient = torch.zeros_like(out)
gradient[:, 1] = 1
out.backward(gradient)
saliency = torch.sum(x.grad, 1, keepdim=True)
