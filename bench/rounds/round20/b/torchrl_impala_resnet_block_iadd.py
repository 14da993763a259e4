# label: hazard raises
# why: `x += self.seq(x)` adds the residual branch into x in place, but x is the tensor the block's first in-place ReLU returned and the following conv saved for backward, so training ImpalaNet fails in backward.
# source: https://github.com/pytorch/rl/pull/3522 (issue https://github.com/pytorch/rl/issues/3519)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _ResNetBlock(nn.Module):
    def __init__(self, num_ch):
        super().__init__()
        resnet_block = []
        resnet_block.append(nn.ReLU(inplace=True))
        resnet_block.append(nn.Conv2d(in_channels=num_ch, out_channels=num_ch, kernel_size=3, stride=1, padding=1))
        resnet_block.append(nn.ReLU(inplace=True))
        resnet_block.append(nn.Conv2d(in_channels=num_ch, out_channels=num_ch, kernel_size=3, stride=1, padding=1))
        self.seq = nn.Sequential(*resnet_block)

    def forward(self, x):
        x += self.seq(x)  # <-- IPL001
        return x


class _ConvNetBlock(nn.Module):
    def __init__(self, in_ch, num_ch):
        super().__init__()
        conv = nn.Conv2d(in_channels=in_ch, out_channels=num_ch, kernel_size=3, stride=1, padding=1)
        mp = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.feats_conv = nn.Sequential(conv, mp)
        self.resnet1 = _ResNetBlock(num_ch=num_ch)
        self.resnet2 = _ResNetBlock(num_ch=num_ch)

    def forward(self, x):
        x = self.feats_conv(x)
        x = self.resnet1(x)
        x = self.resnet1(x)
        return x


class ImpalaNet(nn.Module):
    def __init__(self, num_actions, channels=(8, 16), out_features=32):
        super().__init__()
        self.num_actions = num_actions
        layers = []
        in_ch = 3
        for num_ch in channels:
            layers.append(_ConvNetBlock(in_ch, num_ch))
            in_ch = num_ch
        layers += [nn.ReLU(inplace=True)]
        self.convs = nn.Sequential(*layers)
        self.fc = nn.Sequential(nn.Linear(in_ch * 4, out_features), nn.ReLU(inplace=True))
        core_output_size = out_features + 1
        self.policy = nn.Linear(core_output_size, self.num_actions)
        self.baseline = nn.Linear(core_output_size, 1)

    def forward(self, x, reward):
        B, T, *x_shape = x.shape
        x = x.view(-1, *x.shape[-3:])
        x = self.convs(x)
        x = self.fc(x.view(B * T, -1))
        clipped_reward = torch.clamp(reward, -1, 1).view(B * T, 1)
        core_output = torch.cat([x, clipped_reward], dim=-1)
        policy_logits = self.policy(core_output)
        baseline = self.baseline(core_output)
        return policy_logits.view(B, T, -1), baseline.view(B, T)


def main():
    net = ImpalaNet(num_actions=4)
    obs = torch.randn(2, 3, 3, 8, 8)
    reward = torch.randn(2, 3)
    actions = torch.randint(0, 4, (2, 3))
    logits, baseline = net(obs, reward)
    returns = torch.randn(2, 3)
    advantages = (returns - baseline).detach()
    pg_loss = F.cross_entropy(logits.reshape(-1, 4), actions.reshape(-1), reduction="none") * advantages.reshape(-1)
    loss = pg_loss.mean() + 0.5 * (returns - baseline).pow(2).mean()
    loss.backward()
    return loss.detach(), net.policy.weight.grad


loss, policy_grad = main()
