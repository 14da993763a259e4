# label: hazard silent
# why: acts["pre"] names the same tensor that relu_ then overwrites, so the attribution is taken w.r.t. the post-ReLU activation
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x, acts):
        pre = self.fc1(x)
        acts["pre"] = pre
        pre.relu_()  # <-- IPL006
        return self.fc2(pre)


net = Net()
acts = {}
x = torch.randn(4, 5)
logits = net(x, acts)
score = logits[:, 1].sum()
(attribution,) = torch.autograd.grad(score, acts["pre"])
