# label: safe no-twin
# why: the .data copy_/mul_ writes happen in __init__ while loading and rescaling pretrained weights, before any forward pass has built a graph that uses them.
import torch
import torch.nn as nn

torch.manual_seed(0)

pretrained = {
    "fc.weight": torch.randn(8, 5),
    "fc.bias": torch.randn(8),
    "out.weight": torch.randn(2, 8),
}


class Finetune(nn.Module):
    def __init__(self, state, depth_scale=0.5):
        super().__init__()
        self.fc = nn.Linear(5, 8)
        self.out = nn.Linear(8, 2)
        self.fc.weight.data.copy_(state["fc.weight"])
        self.fc.bias.data.copy_(state["fc.bias"])
        self.out.weight.data.copy_(state["out.weight"])
        self.out.weight.data.mul_(depth_scale)
        self.out.bias.data.zero_()

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)))


model = Finetune(pretrained)
x = torch.randn(7, 5)
loss = model(x).pow(2).mean()
loss.backward()
fc_grad = model.fc.weight.grad.clone()
