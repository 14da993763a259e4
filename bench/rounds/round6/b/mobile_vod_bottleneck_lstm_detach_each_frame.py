# label: safe
# why: the fix from the issue thread: detach the recurrent state after every frame's optimizer step, so each backward stays inside its own frame's graph and the in-place weight update never meets a saved tensor
# source: https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/25 (hebangwen's comment: move net.detach_hidden() into the per-frame loop)
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def SeperableConv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0):
    return nn.Sequential(
        nn.Conv2d(in_channels=in_channels, out_channels=in_channels, kernel_size=kernel_size,
                  groups=in_channels, stride=stride, padding=padding),
        nn.ReLU(),
        nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=1),
    )


def conv_dw(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.ReLU(inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU(inplace=True),
    )


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super(BottleneckLSTMCell, self).__init__()
        self.input_channels = input_channels
        self.hidden_channels = hidden_channels
        self.W = nn.Conv2d(self.input_channels, self.input_channels, kernel_size=3,
                           groups=self.input_channels, stride=1, padding=1)
        self.Wy = nn.Conv2d(int(self.input_channels + self.hidden_channels), self.hidden_channels, kernel_size=1)
        self.Wi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 3, 1, 1, groups=self.hidden_channels, bias=False)
        self.Wbi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbf = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbc = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbo = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wci = None
        self.Wcf = None
        self.Wco = None

    def forward(self, x, h, c):
        x = self.W(x)
        y = torch.cat((x, h), 1)  # concatenate input and hidden layers
        i = self.Wy(y)  # reduce to hidden layer size
        b = self.Wi(i)  # depth wise 3*3
        ci = torch.sigmoid(self.Wbi(b) + c * self.Wci)
        cf = torch.sigmoid(self.Wbf(b) + c * self.Wcf)
        cc = cf * c + ci * torch.relu(self.Wbc(b))
        co = torch.sigmoid(self.Wbo(b) + cc * self.Wco)
        ch = co * torch.relu(cc)
        return ch, cc

    def init_hidden(self, batch_size, hidden, shape):
        self.Wci = torch.zeros(1, hidden, shape[0], shape[1])
        self.Wcf = torch.zeros(1, hidden, shape[0], shape[1])
        self.Wco = torch.zeros(1, hidden, shape[0], shape[1])
        return (torch.zeros(batch_size, hidden, shape[0], shape[1]),
                torch.zeros(batch_size, hidden, shape[0], shape[1]))


class BottleneckLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, height, width, batch_size):
        super(BottleneckLSTM, self).__init__()
        self.cell = BottleneckLSTMCell(input_channels, hidden_channels)
        (h, c) = self.cell.init_hidden(batch_size, hidden=hidden_channels, shape=(height, width))
        self.hidden_state = h
        self.cell_state = c

    def forward(self, input):
        new_h, new_c = self.cell(input, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return self.hidden_state


class SSD(nn.Module):
    def __init__(self, num_classes, alpha=1):
        super(SSD, self).__init__()
        self.num_classes = num_classes
        self.conv13 = conv_dw(8 * alpha, 16 * alpha, 1)
        self.bottleneck_lstm1 = BottleneckLSTM(input_channels=16 * alpha, hidden_channels=4 * alpha,
                                               height=3, width=3, batch_size=1)
        self.regression_header = SeperableConv2d(4 * alpha, 2 * 4, kernel_size=3, padding=1)
        self.classification_header = SeperableConv2d(4 * alpha, 2 * num_classes, kernel_size=3, padding=1)

    def forward(self, x):
        x = self.conv13(x)
        x = self.bottleneck_lstm1(x)
        confidence = self.classification_header(x).permute(0, 2, 3, 1).contiguous()
        confidence = confidence.view(confidence.size(0), -1, self.num_classes)
        location = self.regression_header(x).permute(0, 2, 3, 1).contiguous()
        location = location.view(location.size(0), -1, 4)
        return confidence, location

    def detach_hidden(self):
        self.bottleneck_lstm1.hidden_state = self.bottleneck_lstm1.hidden_state.detach()
        self.bottleneck_lstm1.cell_state = self.bottleneck_lstm1.cell_state.detach()


class MobileVOD(nn.Module):
    def __init__(self, pred_enc, pred_dec):
        super(MobileVOD, self).__init__()
        self.pred_encoder = pred_enc
        self.pred_decoder = pred_dec

    def forward(self, seq):
        x = self.pred_encoder(seq)
        confidences, locations = self.pred_decoder(x)
        return confidences, locations

    def detach_hidden(self):
        self.pred_decoder.detach_hidden()


pred_enc = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
net = MobileVOD(pred_enc, SSD(num_classes=3))
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9)

# one video clip of 3 frames with per-frame targets
images = torch.randn(3, 1, 3, 6, 6)
labels = torch.randint(0, 3, (3, 1, 18))
boxes = torch.randn(3, 1, 18, 4)

net.train(True)
for image, box, label in zip(images, boxes, labels):
    optimizer.zero_grad()
    confidence, locations = net(image)
    classification_loss = nn.functional.cross_entropy(confidence.reshape(-1, 3), label.reshape(-1))
    regression_loss = nn.functional.smooth_l1_loss(locations, box)
    loss = regression_loss + classification_loss
    loss.backward()
    optimizer.step()
    net.detach_hidden()
