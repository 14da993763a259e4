# label: safe
# why: the fix computes input = input.mul(lam).add_(input.flip(0), ...): mul returns a new tensor, so input.flip(0) still reads the unscaled batch, and the in-place add_ only touches the fresh product, which no autograd op has saved.
# source: https://github.com/huggingface/pytorch-image-models/commit/4748c6dff2ead22f1d2785e7aa5e20e2d6db9140 (Fixes #50)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def one_hot(x, num_classes, on_value=1., off_value=0., device='cpu'):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=device).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='cpu'):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value, device=device)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value, device=device)
    return lam * y1 + (1. - lam) * y2


class SoftTargetCrossEntropy(nn.Module):
    def forward(self, x, target):
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class TinyNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.act1 = nn.ReLU(inplace=True)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv_stem(x)))
        x = self.global_pool(x).flatten(1)
        return self.classifier(x)


class Args:
    prefetcher = False
    mixup = 0.2
    mixup_off_epoch = 0
    num_classes = 5
    smoothing = 0.1


def train_epoch(epoch, model, loader, optimizer, loss_fn, args):
    model.train()
    losses = []
    beta = torch.distributions.Beta(torch.tensor(args.mixup), torch.tensor(args.mixup))
    for batch_idx, (input, target) in enumerate(loader):
        if not args.prefetcher:
            if args.mixup > 0.:
                lam = 1.
                if not args.mixup_off_epoch or epoch < args.mixup_off_epoch:
                    lam = float(beta.sample())
                input = input.mul(lam).add_(input.flip(0), alpha=1 - lam)
                target = mixup_target(target, args.num_classes, lam, args.smoothing)

        output = model(input)
        loss = loss_fn(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def main():
    model = TinyNet(num_classes=Args.num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))) for _ in range(3)]
    losses = train_epoch(0, model, loader, optimizer, SoftTargetCrossEntropy(), Args())
    weight = model.classifier.weight.detach().clone()
    return losses, weight


losses, weight = main()
