# label: safe no-twin
# why: the caller makes an empty mask and hands it to a helper that fills patches of it, again and again; each call is meant to see the patches the earlier calls filled
import random

import torch

torch.manual_seed(0)
random.seed(0)


def mask_patch(mask, size):
    top = random.randint(0, mask.shape[0] - size)
    left = random.randint(0, mask.shape[1] - size)
    fresh = (mask[top:top + size, left:left + size] == 0).sum()
    mask[top:top + size, left:left + size] = 1
    return fresh


def block_mask(height, width, budget):
    mask = torch.zeros(height, width, dtype=torch.int)
    count = 0
    while count < budget:
        added = mask_patch(mask, 2)
        if added == 0:
            break
        count += int(added)
    return mask


mask = block_mask(6, 6, 12).float()
