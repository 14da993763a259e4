# label: safe
# why: the SpecAugment layer masks frequency bands of the raw acoustic features with an in-place fill_ at the very start of the x-vector forward; those features come straight from the data pipeline and no op has saved them yet.
# source: https://github.com/Snowdar/asv-subtools/issues/27
import torch
import torch.nn as nn

torch.manual_seed(0)


class SpecAugment(nn.Module):
    """Frequency masking applied inside the network during training (inputs: [batch, frequency, time])."""

    def __init__(self, frequency=0.2, frame=0.2, rows=1, cols=1, random_rows=False, random_cols=False):
        super(SpecAugment, self).__init__()
        self.p_f = frequency
        self.p_t = frame
        self.rows = rows
        self.cols = cols
        self.random_rows = random_rows
        self.random_cols = random_cols
        self.init = False
        self.generator = torch.Generator().manual_seed(0)

    def forward(self, inputs):
        if not self.training:
            return inputs
        if self.p_f > 0.:
            num_f = inputs.shape[1]
            max_f = int(num_f * self.p_f)
            for _ in range(self.rows):
                f = int(torch.randint(0, max_f + 1, (1,), generator=self.generator))
                f_0 = int(torch.randint(0, num_f - f + 1, (1,), generator=self.generator))
                inverted_factor = num_f / (num_f - f)
                inputs[:, f_0:f_0 + f, :].fill_(0.)
                inputs.mul_(inverted_factor)
        if self.p_t > 0.:
            num_t = inputs.shape[2]
            max_t = int(num_t * self.p_t)
            for _ in range(self.cols):
                t = int(torch.randint(0, max_t + 1, (1,), generator=self.generator))
                t_0 = int(torch.randint(0, num_t - t + 1, (1,), generator=self.generator))
                inputs[:, :, t_0:t_0 + t].fill_(0.)
        return inputs


class Xvector(nn.Module):
    def __init__(self, inputs_dim=8, num_targets=3):
        super(Xvector, self).__init__()
        self.aug_dropout = SpecAugment(frequency=0.25, frame=0.2)
        self.tdnn1 = nn.Sequential(nn.Conv1d(inputs_dim, 16, 5, padding=2), nn.ReLU(inplace=True), nn.BatchNorm1d(16))
        self.tdnn2 = nn.Sequential(nn.Conv1d(16, 16, 3, padding=1), nn.ReLU(inplace=True), nn.BatchNorm1d(16))
        self.embedding = nn.Linear(32, 12)
        self.output = nn.Linear(12, num_targets)

    def forward(self, inputs):
        x = self.aug_dropout(inputs)
        x = self.tdnn2(self.tdnn1(x))
        stats = torch.cat([x.mean(2), x.std(2)], dim=1)
        return self.output(torch.relu(self.embedding(stats)))


def load_batch(step):
    g = torch.Generator().manual_seed(100 + step)
    feats = torch.randn(4, 8, 20, generator=g)
    labels = torch.randint(0, 3, (4,), generator=g)
    return feats, labels


def train_step(model, optimizer, step):
    feats, labels = load_batch(step)
    logits = model(feats)
    loss = nn.functional.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


model = Xvector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = torch.stack([train_step(model, optimizer, step) for step in range(3)])
