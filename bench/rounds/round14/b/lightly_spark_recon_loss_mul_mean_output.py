# label: safe
# why: SparK's patch reconstruction loss multiplies the per-patch mean (l2_loss) in place by the non-active mask; MeanBackward only needs the input shape, not its output, so l2_loss.mul_ gives the same loss and gradients as the out-of-place product the later commit switched to
# source: https://github.com/lightly-ai/lightly/blob/3a59d6a571c66a49a8c5d7f2886210dab7c13f97/lightly/loss/sparse_spark.py (pre-fix version, parent of commit 3a59d6a571c66a49a8c5d7f2886210dab7c13f97)
import torch
from torch import nn

torch.manual_seed(0)


class SparKPatchReconLoss(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, inp_patches, rec_patches, active_mask):
        if active_mask.ndim != 4:
            raise ValueError("active_mask must be non-flattened with shape (B, 1, f, f)")

        mean = inp_patches.mean(dim=-1, keepdim=True)
        var = (inp_patches.var(dim=-1, keepdim=True) + self.eps) ** 0.5

        inp_norm = (inp_patches - mean) / var

        l2_loss = ((rec_patches - inp_norm) ** 2).mean(dim=2)

        non_active = active_mask.logical_not().int().view(active_mask.shape[0], -1)

        recon_loss = l2_loss.mul_(non_active).sum() / (non_active.sum() + 1e-8)
        return recon_loss, mean, var


def patchify(imgs, p):
    b, c, h, w = imgs.shape
    x = imgs.reshape(b, c, h // p, p, w // p, p)
    x = torch.einsum("bchpwq->bhwpqc", x)
    return x.reshape(b, (h // p) * (w // p), p * p * c)


class TinyDecoder(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=2, stride=2)
        self.head = nn.Linear(dim, 2 * 2 * 3)

    def forward(self, masked_imgs):
        feats = self.proj(masked_imgs).flatten(2).transpose(1, 2)
        return self.head(torch.relu(feats))


criterion = SparKPatchReconLoss()
decoder = TinyDecoder()
imgs = torch.randn(2, 3, 8, 8)
active_mask = torch.rand(2, 1, 4, 4) > 0.6
pixel_mask = active_mask.repeat_interleave(2, 2).repeat_interleave(2, 3)
rec_patches = decoder(imgs * pixel_mask)
inp_patches = patchify(imgs, 2)
recon_loss, patch_mean, patch_var = criterion(inp_patches, rec_patches, active_mask)
recon_loss.backward()
