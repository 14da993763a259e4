# label: hazard silent
# why: the loss closure scales the target batch with y /= 127; during validation the same targets are passed to validloss_fn and then to trainloss_fn, so the second call sees targets already divided by 127 and the logged "validation-training loss" is computed against y / 127**2
# source: https://github.com/LIMUNIMI/ContextAwareAMT/commit/1681a7ae3ddab3f8f66662566aa3d5ce30c6c7d1 (mpc2c/training.py trainloss_fn: "divide, but not in-place, otherwise successive operations would see a different value for `y`")
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data

torch.manual_seed(0)


class VelocityEstimation(nn.Module):
    def __init__(self, bins, frames):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(bins * frames, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x))[..., None, None]

    def predict(self, x):
        return self.forward(x)


def train(trainloader, validloader, model, lr, epochs=2):
    optim = torch.optim.Adadelta(model.parameters(), lr=lr)

    def trainloss_fn(x, y, lens):
        x, y, lens = x[0], y[0], lens[0]
        y /= 127  # <-- IPL004: rescales the caller's target batch, which validation reuses for the next loss

        if not lens:
            # if `lens` is False, then we are do not have features nor frames
            x = x[..., 0, 0]
            return F.l1_loss(x, y)

        loss = torch.zeros(len(lens))
        for batch, L in enumerate(lens):
            loss[batch] = F.l1_loss(x[batch, :L], y[batch, :L])
        return loss

    validloss_fn = trainloss_fn
    history = []
    for epoch in range(epochs):
        model.train()
        trainloss = []
        for inputs, targets, lens in trainloader:
            optim.zero_grad()
            out = [model(*inputs)]
            loss = trainloss_fn(out, targets, lens)
            loss.backward()
            optim.step()
            trainloss.append(loss.detach())

        validloss, trainloss_valid = [], []
        with torch.no_grad():
            model.eval()
            for inputs, targets, lens in validloader:
                out = [model.predict(*inputs)]
                validloss.append(validloss_fn(out, targets, lens))
                trainloss_valid.append(trainloss_fn(out, targets, lens))
        history.append(torch.stack([torch.stack(trainloss).mean(),
                                    torch.stack(validloss).mean(),
                                    torch.stack(trainloss_valid).mean()]))
    return torch.stack(history)


def collate(samples):
    feats = torch.stack([f for f, _ in samples])
    velocities = torch.stack([v for _, v in samples])
    return [feats], [velocities], [False]


def make_loader(n, batch, bins=6, frames=5):
    feats = torch.randn(n, bins, frames)
    velocities = torch.randint(1, 128, (n, 1)).float()
    dataset = torch.utils.data.TensorDataset(feats, velocities)
    return torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=False, collate_fn=collate)


model = VelocityEstimation(6, 5)
trainloader = make_loader(12, 4)
validloader = make_loader(8, 4)
history = train(trainloader, validloader, model, lr=1.0)
