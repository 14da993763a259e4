# label: hazard raises
# why: hooks on every leaf module make bn2 return its output through BackwardHookFunction; the block then adds the shortcut into that view in place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.act = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.act(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x  # <-- IPL001: bn2's output is the hook's view
        return self.act(out)


def hook_leaves(module, hook, handles):
    children = list(module.children())
    if children:
        for child in children:
            hook_leaves(child, hook, handles)
    else:
        handles.append(module.register_full_backward_hook(hook))
    return handles


seen = []
model = nn.Sequential(nn.Conv2d(3, 4, 1), Block(4))
handles = hook_leaves(model, lambda m, gi, go: seen.append(go[0].norm()), [])
images = torch.randn(2, 3, 5, 5, requires_grad=True)
model(images).sum().backward()
grad = images.grad
