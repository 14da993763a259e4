# label: safe
# why: the fixed block adds the shortcut out of place (outputs = outputs + shortcut), so the ReLU result saved for backward stays intact.
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

    def __init__(self, inplanes: int, outplanes: int, stride: int = 1) -> None:
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

    def forward(self, input_data: torch.Tensor) -> torch.Tensor:
        outputs = F.relu(self.bn1(self.conv1(input_data)))
        outputs = F.relu(self.bn2(self.conv2(outputs)))
        outputs = outputs + self.shorcut(input_data)
        outputs = F.relu(outputs)
        return outputs


class SincNet(nn.Module):
    def __init__(self, stride=10):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 25, stride=stride)
        self.norm = nn.InstanceNorm1d(8, affine=True)

    def forward(self, waveforms):
        return self.norm(torch.abs(self.conv(waveforms)))


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, m_channels=4, feat_dim=8, embed_dim=6):
        super().__init__()
        self.inplanes = m_channels
        self.feat_dim = feat_dim
        self.sincnet = SincNet()
        self.conv1 = nn.Conv2d(1, m_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(m_channels)
        self.layer1 = self.__make_layer(block, m_channels, num_blocks[0], stride=1)
        self.layer2 = self.__make_layer(block, m_channels * 2, num_blocks[1], stride=2)
        current_freq_dim = int((self.feat_dim - 1) / 2) + 1
        self.embedding = nn.Linear(m_channels * 2 * 2 * current_freq_dim, embed_dim)

    def __make_layer(self, block, planes, num_blocks, stride) -> nn.Sequential:
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for current_stride in strides:
            layers.append(block(self.inplanes, planes, stride=current_stride))
            self.inplanes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, waveforms: torch.Tensor):
        filterbank = self.sincnet(waveforms)
        outputs = filterbank.unsqueeze_(1)
        outputs = F.relu(self.bn1(self.conv1(outputs)))
        # To retrieve only layers whose name is of the form "layer1.1" for instance:
        name_filter = re.compile("^layer[0-9]{1,}.[0-9]{1,}$")
        for name, block in [(name, block) for name, block in self.named_modules() if name_filter.match(name)]:
            outputs = block(outputs)
        pooling_mean = torch.mean(outputs, dim=-1)
        meansq = torch.mean(outputs * outputs, dim=-1)
        pooling_std = torch.sqrt(meansq - pooling_mean ** 2 + 1e-10)
        outputs = torch.cat((torch.flatten(pooling_mean, start_dim=1), torch.flatten(pooling_std, start_dim=1)), 1)
        return self.embedding(outputs)


model = ResNet(BasicBlock, [1, 2])
classifier = nn.Linear(6, 3)
optimizer = torch.optim.Adam(list(model.parameters()) + list(classifier.parameters()), lr=1e-3)
waveforms = torch.randn(2, 1, 400)
speakers = torch.tensor([0, 2])
embeddings = model(waveforms)
loss = F.cross_entropy(classifier(embeddings), speakers)
loss.backward()
optimizer.step()
