# label: hazard raises no-twin
# why: line_search narrows its boolean index set with indices[indices] = ..., writing into the very tensor that is also used as the index, which torch rejects because source and destination overlap
# source: https://github.com/khorrams/IGOS_pp/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Upscale(nn.Module):
    def __init__(self, out_size=8):
        super().__init__()
        self.out_size = out_size

    def forward(self, x):
        return F.interpolate(x, size=(self.out_size, self.out_size), mode='bilinear', align_corners=False)


upscale = Upscale(8)
model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3)).eval()
images = torch.rand(3, 3, 8, 8)
baselines = torch.zeros_like(images)
labels = torch.tensor([0, 1, 2])


def loss_func(up_masks, masks, indices):
    """Deletion-game loss: class score of the image blended towards the baseline."""
    blended = images[indices] * up_masks + baselines[indices] * (1 - up_masks)
    logits = model(blended)
    return logits.gather(1, labels[indices].unsqueeze(1)) + 0.01 * masks.abs().flatten(1).sum(1, keepdim=True)


def line_search(masks, total_grads, loss_func, alpha=8, beta=0.0001, decay=0.2,):
    with torch.no_grad():
        i = 0
        mod = len(masks.shape) - 3
        num_inputs = masks.shape[0]
        # The indices of masks that still need their alphas updated
        indices = torch.ones(num_inputs, dtype=torch.bool)
        # Create initial alpha values for each mask
        alphas = torch.ones(num_inputs) * alpha

        up_masks = upscale(masks.view(-1, *masks.shape[mod:])).view(-1, *masks.shape[1:mod], 1, upscale.out_size, upscale.out_size)

        # Compute the base loss used in the condition
        base_losses = loss_func(up_masks, masks, indices).view(-1)
        t = -beta * (total_grads ** 2).view(num_inputs, -1).sum(dim=1).view(num_inputs)

        while True:
            new_masks = torch.clamp(masks[indices] - alphas[indices].view(-1, *(1,) * mod, 1, 1) * total_grads[indices], 0, 1)
            up_masks = upscale(new_masks.view(-1, *masks.shape[mod:])).view(-1, *masks.shape[1:mod], 1, upscale.out_size, upscale.out_size)
            losses = loss_func(up_masks, new_masks, indices).view(-1)
            indices[indices] = losses > base_losses[indices] + alphas[indices] * t[indices]  # <-- IPL002: indices is written while it is also the index of the same assignment
            indices[indices] *= (alphas[indices] >= 0.00001)  # <-- IPL002: same overlap between the index and the written tensor
            if not indices.sum():
                break
            alphas[indices] *= decay
            i += 1
    return alphas.view(-1, 1, 1, 1)


masks = torch.full((3, 1, 4, 4), 0.5, requires_grad=True)
up = upscale(masks)
total_loss = loss_func(up, masks, torch.ones(3, dtype=torch.bool)).sum()
total_grads = torch.autograd.grad(total_loss, masks)[0]
alphas = line_search(masks.detach(), total_grads, loss_func)
new_masks = (masks.detach() - alphas * total_grads).clamp(0, 1)
