# label: hazard raises
# why: the done detector's inner model ends in nn.Sigmoid, which saves its output for backward; DoneDetector then zeroes the padded frames with `out *= mask`, overwriting that saved output.
# source: https://github.com/speechbrain/speechbrain/commit/69c4afb4761c9eaec881adfc31109e05039fa5e3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def length_to_mask(length, max_len):
    return (torch.arange(max_len)[None, :] < length[:, None]).float()


class TinyCRDNN(nn.Module):
    def __init__(self, n_mels=10, channels=8, neurons=12):
        super().__init__()
        self.cnn = nn.Conv1d(n_mels, channels, 3, padding=1)
        self.rnn = nn.GRU(channels, neurons, batch_first=True)
        self.dnn = nn.Sequential(nn.Linear(neurons, neurons), nn.LeakyReLU())

    def forward(self, x):  # x: (batch, time, n_mels)
        x = F.leaky_relu(self.cnn(x.transpose(1, 2))).transpose(1, 2)
        x, _ = self.rnn(x)
        return self.dnn(x)


class DoneDetector(nn.Module):
    def __init__(self, model, out):
        super().__init__()
        self.model = model
        self.out = out

    def forward(self, feats, length=None):
        out = self.model(feats)
        if length is not None:
            max_len = feats.size(1)
            mask = length_to_mask(length=length * max_len, max_len=max_len)
            out *= mask.unsqueeze(-1)  # <-- IPL001: Sigmoid saved `out` for its backward
        out = self.out(out)
        return out


done_detector = DoneDetector(
    model=nn.Sequential(TinyCRDNN(), nn.Linear(12, 1), nn.Sigmoid()),
    out=nn.Softmax(dim=1),
)

specs = torch.randn(3, 20, 10)  # (batch, frames, mels)
lengths = torch.tensor([1.0, 0.75, 0.5])  # relative lengths
done_target = torch.zeros(3, 20, 1)
for i, l in enumerate((lengths * 20).long()):
    done_target[i, l - 1] = 1.0

preds = done_detector(specs, lengths)
loss = F.binary_cross_entropy(preds.clamp(1e-6, 1 - 1e-6), done_target)
loss.backward()
grad = done_detector.model[1].weight.grad.clone()
