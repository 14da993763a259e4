# label: hazard silent
# why: mixup_batch mixes the caller's image batch in place and returns the mixed batch plus soft targets; the clean consistency pass on `images` then sees mixed images
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mixup_batch(images, targets, num_classes, lam):
    perm = torch.randperm(images.size(0))
    shuffled = images[perm]
    mixed = images.mul_(lam).add_(shuffled, alpha=1.0 - lam)  # <-- IPL004
    onehot = F.one_hot(targets, num_classes).float()
    return mixed, lam * onehot + (1.0 - lam) * onehot[perm]


model = nn.Sequential(
    nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4)
)
images = torch.randn(6, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 3, 1, 0])
lam = 0.5 + 0.5 * torch.rand(1).item()

mixed, soft_targets = mixup_batch(images, labels, 4, lam)
mixed_logits = model(mixed)
mix_loss = torch.sum(-soft_targets * mixed_logits.log_softmax(-1), dim=-1).mean()

# consistency term on the clean batch
clean_logits = model(images)
clean_loss = F.cross_entropy(clean_logits, labels)
loss = mix_loss + 0.5 * clean_loss
loss.backward()
grad_conv = model[0].weight.grad.clone()
grad_fc = model[4].weight.grad.clone()
