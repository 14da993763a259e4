# label: hazard silent
# why: the non-prefetch mixup in train_epoch scales the batch in place with input.mul_(lam) before input.flip(0) is evaluated, so the "other" images mixed in are already scaled by lam and the model silently trains on lam*x + (1-lam)*lam*flip(x) instead of the intended mix.
# source: https://github.com/huggingface/pytorch-image-models/issues/50 (fixed in commit 4748c6dff2ead22f1d2785e7aa5e20e2d6db9140, train.py)
import torch
import torch.nn as nn

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
        loss = torch.sum(-target * torch.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class Args:
    mixup = 0.4
    mixup_off_epoch = 0
    num_classes = 5
    smoothing = 0.1
    prefetcher = False


def train_epoch(epoch, model, loader, optimizer, loss_fn, args, beta):
    model.train()
    losses = []
    for batch_idx, (input, target) in enumerate(loader):
        if not args.prefetcher:
            if args.mixup > 0.:
                lam = 1.
                if not args.mixup_off_epoch or epoch < args.mixup_off_epoch:
                    lam = float(beta.sample())
                input.mul_(lam).add_(input.flip(0), alpha=1 - lam)  # <-- IPL002
                target = mixup_target(target, args.num_classes, lam, args.smoothing)

        output = model(input)
        loss = loss_fn(output, target)
        losses.append(loss.detach())

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.stack(losses)


def main():
    args = Args()
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, args.num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = [(torch.rand(4, 3, 8, 8), torch.randint(0, args.num_classes, (4,))) for _ in range(3)]
    beta = torch.distributions.Beta(torch.tensor(args.mixup), torch.tensor(args.mixup))
    losses = train_epoch(0, model, loader, optimizer, SoftTargetCrossEntropy(), args, beta)
    return losses, model[0].weight.detach().clone()


losses, conv_weight = main()
