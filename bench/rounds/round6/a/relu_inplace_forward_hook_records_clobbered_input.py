# label: hazard silent
# why: the forward hooks record the ReLU input to measure pre-activation statistics, but with ReLU(inplace=True) the hook runs after forward and sees the input already rectified, so the recorded pre-activations (and the derived statistics) are wrong
# source: https://github.com/pytorch/pytorch/issues/95617
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.act1 = nn.ReLU(inplace=True)  # <-- IPL002: overwrites the input that the forward hook reads afterwards
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.act1(self.fc1(x)))


model = MLP()
records = {}


def my_pre_hook(m, input):
    records[m.__name__ + ".pre_hook_input"] = input[0]


def my_hook(m, input, output):
    records[m.__name__ + ".input"] = input[0]
    records[m.__name__ + ".output"] = output


for name, module in model.named_modules():
    if isinstance(module, nn.ReLU):
        module.__name__ = name
        module.register_forward_pre_hook(my_pre_hook)
        module.register_forward_hook(my_hook)

x = torch.randn(5, 6)
out = model(x)
out.sum().backward()

pre_activation = records["act1.input"].detach().clone()
negative_fraction = (pre_activation < 0).float().mean()
pre_activation_mean = pre_activation.mean(dim=0)
