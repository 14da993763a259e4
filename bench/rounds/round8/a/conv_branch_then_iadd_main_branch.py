# label: hazard raises
# why: x (the conv1 output) feeds the side branch conv1_p, which saves it for backward, and the main branch then does `x += ...` on that same tensor.
# source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoBranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 2, 1)
        self.some_layer = nn.Conv2d(3, 8, 1)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, input):
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        x += self.some_layer(input)  # <-- IPL001: conv1_p saved x for its weight gradient
        return self.head(x), x_p


net = TwoBranchNet()
img = torch.rand(2, 3, 8, 8)
seg_target = torch.randint(0, 2, (2, 8, 8))
aux_target = torch.rand(2, 2, 8, 8)
out, aux = net(img)
loss = nn.functional.cross_entropy(out, seg_target) + 0.4 * nn.functional.mse_loss(aux, aux_target)
loss.backward()
