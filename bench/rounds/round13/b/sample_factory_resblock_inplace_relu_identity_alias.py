# label: hazard silent
# why: the residual core starts with an in-place ReLU, so it rectifies x itself while `identity` still aliases x, and the skip connection silently adds the rectified input instead of the block input
# source: https://github.com/alex-petrenko/sample-factory/commit/bdfad33e12369bae7aa4efd705621d5295ec2625 (in-place nonlinearity later disabled in a31dae44)
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)


def nonlinearity(cfg):
    if cfg.nonlinearity == 'elu':
        return nn.ELU(inplace=True)
    elif cfg.nonlinearity == 'relu':
        return nn.ReLU(inplace=True)  # <-- IPL002: rectifies x in place while ResBlock.identity still aliases it
    elif cfg.nonlinearity == 'tanh':
        return nn.Tanh()
    else:
        raise Exception('Unknown nonlinearity')


class ResBlock(nn.Module):
    def __init__(self, cfg, input_ch, output_ch):
        super().__init__()
        layers = [
            nonlinearity(cfg),
            nn.Conv2d(input_ch, output_ch, kernel_size=3, stride=1, padding=1),  # padding SAME
            nonlinearity(cfg),
            nn.Conv2d(output_ch, output_ch, kernel_size=3, stride=1, padding=1),  # padding SAME
        ]
        self.res_block_core = nn.Sequential(*layers)

    def forward(self, x):
        identity = x
        out = self.res_block_core(x)
        out.add_(identity)  # is this a valid use of an in-place operation?
        return out


class ResnetEncoder(nn.Module):
    def __init__(self, cfg, input_ch, resnet_conf=((4, 2), (8, 1))):
        super().__init__()
        curr_input_channels = input_ch
        layers = []
        for i, (out_channels, res_blocks) in enumerate(resnet_conf):
            layers.extend([
                nn.Conv2d(curr_input_channels, out_channels, kernel_size=3, stride=1, padding=1),  # padding SAME
                nn.MaxPool2d(kernel_size=3, stride=2, padding=1),  # padding SAME
            ])
            for j in range(res_blocks):
                layers.append(ResBlock(cfg, out_channels, out_channels))
            curr_input_channels = out_channels
        layers.append(nonlinearity(cfg))
        self.conv_head = nn.Sequential(*layers)

    def forward(self, obs):
        x = self.conv_head(obs)
        return x.flatten(1)


cfg = SimpleNamespace(nonlinearity='relu')
encoder = ResnetEncoder(cfg, input_ch=3)
policy_head = nn.Linear(8 * 3 * 3, 4)
value_head = nn.Linear(8 * 3 * 3, 1)

obs = torch.randn(2, 3, 12, 12)
features = encoder(obs)
logits = policy_head(features)
values = value_head(features)
loss = -logits.log_softmax(-1)[:, 1].mean() + values.pow(2).mean()
loss.backward()
