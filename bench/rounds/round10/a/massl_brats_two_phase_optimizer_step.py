# label: hazard raises no-twin
# why: the labeled phase steps optimizer[0] (in-place weight update) before the unlabeled phase backpropagates a loss built from the same forward pass, whose graph saved those weights
# source: https://github.com/ShuaiChenBIGR/MASSL-segmentation-framework/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UNetSSL(nn.Module):
    """shared encoder, a segmentation decoder (labeled) and a reconstruction decoder (unlabeled)"""

    def __init__(self, in_ch=1, ch=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, ch, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.seg_head = nn.Conv2d(ch, 1, 1)
        self.rec_head = nn.Conv2d(ch, in_ch, 1)

    def forward(self, x):
        f = self.enc(x)
        outputsL = torch.sigmoid(self.seg_head(f))
        outputsU = self.rec_head(f)
        return outputsL, outputsU


model = UNetSSL()
criterion = [nn.BCELoss(), nn.MSELoss()]
optimizer = [torch.optim.SGD(model.parameters(), lr=0.1),
             torch.optim.SGD(model.parameters(), lr=0.1)]
w1, w2, w3 = 1.0, 0.5, 0.5

inputs = torch.randn(2, 1, 8, 8)
labels = (torch.rand(2, 1, 8, 8) > 0.5).float()
running_loss = 0.0

outputsL, outputsU = model(inputs)
# attention maps built from the segmentation prediction
outputsU_back = outputsU * (1 - outputsL)
outputsU_fore = outputsU * outputsL
labels_back = inputs * (1 - labels)
labels_fore = inputs * labels

for phase in ['trainLabeled', 'trainUnlabeled']:
    if phase == 'trainLabeled':
        optimizer[0].zero_grad()
        loss = w1 * criterion[0](outputsL, labels)
        loss.backward(retain_graph=True)
        optimizer[0].step()  # <-- IPL001: updates the encoder weights saved by the graph that the trainUnlabeled loss still backpropagates through
        running_loss += loss.item() * inputs.size(0)
    elif phase == 'trainUnlabeled':
        optimizer[1].zero_grad()
        loss = w2 * criterion[1](outputsU_back.float(), labels_back.float()) + \
            w3 * criterion[1](outputsU_fore.float(), labels_fore.float())
        loss.backward()
        optimizer[1].step()
        running_loss += loss.item() * inputs.size(0)
