# label: hazard raises
# why: BasicBlock adds the shortcut in place (outputs += shortcut) to the output of F.relu, which ReluBackward saved, so backward through the speaker-embedding ResNet fails
# source: https://github.com/pyannote/pyannote-audio/commit/bfb71d95d92924bf4af62f4357363b4a33887f83
import re

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    """A residual block composed of two convolutional layers and one residual
    connection linking the block input to the block output"""

    expansion = 1

    def __init__(self, inplanes, outplanes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, outplanes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outplanes)
        self.conv2 = nn.Conv2d(outplanes, outplanes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outplanes)
        self.shorcut = nn.Sequential()
        if stride != 1 or inplanes != self.expansion * outplanes:
            self.shorcut = nn.Sequential(
                nn.Conv2d(inplanes, self.expansion * outplanes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(self.expansion * outplanes),
            )

    def forward(self, input_data):
        outputs = F.relu(self.bn1(self.conv1(input_data)))
        outputs = F.relu(self.bn2(self.conv2(outputs)))
        outputs += self.shorcut(input_data)  # <-- IPL001: F.relu saved its output for backward
        outputs = F.relu(outputs)
        return outputs


class FilterbankStub(nn.Module):
    """Stand-in for SincNet: waveform (batch, channel, sample) -> (batch, feat_dim, frames)."""

    def __init__(self, feat_dim, stride=10):
        super().__init__()
        self.conv = nn.Conv1d(1, feat_dim, kernel_size=25, stride=stride)

    def forward(self, waveforms):
        return torch.log1p(self.conv(waveforms).abs())


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, m_channels=4, feat_dim=12, embed_dim=16, seg_part_insert=None):
        super().__init__()
        self.inplanes = m_channels
        self.feat_dim = feat_dim
        self.embed_dim = embed_dim
        self.sincnet = FilterbankStub(feat_dim)
        self.seg_part_insert = seg_part_insert
        self.conv1 = nn.Conv2d(1, m_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(m_channels)
        self.layer1 = self.__make_layer(block, m_channels, num_blocks[0], stride=1)
        self.layer2 = self.__make_layer(block, m_channels * 2, num_blocks[1], stride=2)
        current_freq_dim = int((self.feat_dim - 1) / 2) + 1
        self.embedding = nn.Linear(m_channels * 2 * 2 * current_freq_dim, embed_dim)

    def __make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for current_stride in strides:
            layers.append(block(self.inplanes, planes, stride=current_stride))
            self.inplanes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, waveforms):
        filterbank = self.sincnet(waveforms)
        outputs = filterbank.unsqueeze_(1)
        outputs = F.relu(self.bn1(self.conv1(outputs)))
        # To retrieve only layers whose name is of the form "layer1.1" for instance:
        name_filter = re.compile("^layer[0-9]{1,}.[0-9]{1,}$")
        for name, block in [(name, block) for name, block in self.named_modules() if name_filter.match(name)]:
            outputs = block(outputs)
            if self.seg_part_insert is not None and self.seg_part_insert == name:
                seg_part_input = outputs
        pooling_mean = torch.mean(outputs, dim=-1)
        meansq = torch.mean(outputs * outputs, dim=-1)
        pooling_std = torch.sqrt(meansq - pooling_mean ** 2 + 1e-10)
        outputs = torch.cat((torch.flatten(pooling_mean, start_dim=1), torch.flatten(pooling_std, start_dim=1)), 1)
        embedding = self.embedding(outputs)
        return embedding


model = ResNet(BasicBlock, [2, 1])
waveforms = torch.randn(3, 1, 400)
embeddings = model(waveforms)
target = torch.randn(3, 16)
loss = 1 - F.cosine_similarity(embeddings, target).mean()
loss.backward()
