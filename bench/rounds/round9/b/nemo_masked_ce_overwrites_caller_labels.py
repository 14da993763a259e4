# label: hazard silent
# why: MaskedCrossEntropy applies its mask with labels.masked_fill_ on a view of the caller's label tensor, so scoring the same batch with a second mask sees labels already set to ignore_index and the second loss silently becomes 0.
# source: https://github.com/NVIDIA-NeMo/Automodel/issues/3917
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class MaskedCrossEntropy:
    def __init__(self, fp32_upcast=True, ignore_index=-100, reduction="sum"):
        self.fp32_upcast = fp32_upcast
        self.ignore_index = ignore_index
        self.reduction = reduction

    def __call__(self, logits, labels, mask=None, num_label_tokens=None):
        logits = logits.view(-1, logits.size(-1))
        labels = labels.view(-1)
        if mask is not None:
            with torch.no_grad():
                labels.masked_fill_(mask.view(-1) == 0, self.ignore_index)  # <-- IPL004: labels aliases the caller's batch["labels"]
        if self.fp32_upcast:
            logits = logits.float()
        loss = F.cross_entropy(logits, labels, ignore_index=self.ignore_index, reduction=self.reduction)
        if num_label_tokens is not None:
            loss = loss / num_label_tokens
        return loss


lm_head = nn.Linear(6, 9)
hidden = torch.randn(2, 8, 6)
batch = {"labels": torch.randint(0, 9, (2, 8))}
mask_a = torch.zeros(2, 8, dtype=torch.long)
mask_a[:, :4] = 1
mask_b = 1 - mask_a
loss_fn = MaskedCrossEntropy()
# two objectives scored on the same batch, each backpropagated on its own
loss_a = loss_fn(lm_head(hidden), batch["labels"], mask=mask_a)
loss_a.backward()
loss_b = loss_fn(lm_head(hidden), batch["labels"], mask=mask_b)
loss_b.backward()
