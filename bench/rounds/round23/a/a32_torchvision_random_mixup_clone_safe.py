# label: safe
# why: RandomMixup mixes the batch with in-place mul_/add_, but with the default inplace=False it first clones batch and target, and the rolled copy is a fresh tensor, so the caller's clean images are untouched and the mix reads unscaled pixels.
# source: https://github.com/pytorch/vision/pull/4379 (references/classification/transforms.py RandomMixup)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RandomMixup(torch.nn.Module):
    """Randomly apply Mixup to the provided batch and targets."""

    def __init__(self, num_classes, p=0.5, alpha=1.0, inplace=False):
        super().__init__()
        assert num_classes > 0, "Please provide a valid positive value for the num_classes."
        assert alpha > 0, "Alpha param can't be zero."
        self.num_classes = num_classes
        self.p = p
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, batch, target):
        if batch.ndim != 4:
            raise ValueError("Batch ndim should be 4. Got {}".format(batch.ndim))
        if not self.inplace:
            batch = batch.clone()
            target = target.clone()

        if target.ndim == 1:
            target = F.one_hot(target, num_classes=self.num_classes).to(dtype=batch.dtype)

        if torch.rand(1).item() >= self.p:
            return batch, target

        # It's faster to roll the batch by one instead of shuffling it to create image pairs
        batch_rolled = batch.roll(1, 0)
        target_rolled = target.roll(1, 0)

        # Implemented as on mixup paper, page 3.
        lambda_param = float(torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha]))[0])
        batch_rolled.mul_(1.0 - lambda_param)
        batch.mul_(lambda_param).add_(batch_rolled)

        target_rolled.mul_(1.0 - lambda_param)
        target.mul_(lambda_param).add_(target_rolled)

        return batch, target


def train_one_epoch(model, criterion, optimizer, data_loader, mixup):
    model.train()
    clean_acc = []
    for image, target in data_loader:
        mixed_image, mixed_target = mixup(image, target)
        output = model(mixed_image)
        loss = criterion(output, mixed_target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            clean_acc.append((model(image).argmax(1) == target).float().mean())
    return torch.stack(clean_acc)


def main():
    num_classes = 4
    model = nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    data_loader = [(torch.rand(4, 3, 8, 8), torch.randint(0, num_classes, (4,))) for _ in range(3)]
    mixup = RandomMixup(num_classes, p=1.0, alpha=0.2)
    clean_acc = train_one_epoch(model, criterion, optimizer, data_loader, mixup)
    return clean_acc, model[0].weight.detach().clone()


clean_acc, conv_weight = main()
