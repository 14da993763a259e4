# label: safe
# why: the default batched cleaning path rebinds `lqs = (lqs + residues).view(...)` out of place, so neither the caller's batch nor the input saved by the cleaning convs is overwritten; the in-place ReLU/LeakyReLU act on fresh conv outputs.
# source: https://github.com/open-mmlab/mmagic/blob/b3c855b5c11435ecb3723834333e6213f6e1f04c/mmagic/models/editors/real_basicvsr/real_basicvsr_net.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlockNoBN(nn.Module):
    def __init__(self, mid_channels=8, res_scale=1.0):
        super().__init__()
        self.res_scale = res_scale
        self.conv1 = nn.Conv2d(mid_channels, mid_channels, 3, 1, 1, bias=True)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, 1, 1, bias=True)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.conv2(self.relu(self.conv1(x)))
        return identity + out * self.res_scale


class ResidualBlocksWithInputConv(nn.Module):
    def __init__(self, in_channels, out_channels=8, num_blocks=2):
        super().__init__()
        main = [nn.Conv2d(in_channels, out_channels, 3, 1, 1, bias=True), nn.LeakyReLU(negative_slope=0.1, inplace=True)]
        main += [ResidualBlockNoBN(out_channels) for _ in range(num_blocks)]
        self.main = nn.Sequential(*main)

    def forward(self, feat):
        return self.main(feat)


class BasicVSRNet(nn.Module):
    """Stand-in for the propagation backbone: per-frame features + x4 pixel shuffle."""

    def __init__(self, mid_channels=8, num_blocks=1):
        super().__init__()
        self.resblocks = ResidualBlocksWithInputConv(3, mid_channels, num_blocks)
        self.upsample = nn.Sequential(nn.Conv2d(mid_channels, 3 * 16, 3, 1, 1), nn.PixelShuffle(4))

    def forward(self, lqs):
        n, t, c, h, w = lqs.size()
        out = self.upsample(self.resblocks(lqs.reshape(-1, c, h, w)))
        return out.view(n, t, c, 4 * h, 4 * w) + F.interpolate(lqs.reshape(-1, c, h, w), scale_factor=4, mode='bilinear', align_corners=False).view(n, t, c, 4 * h, 4 * w)


class RealBasicVSRNet(nn.Module):
    def __init__(self, mid_channels=8, num_propagation_blocks=1, num_cleaning_blocks=2,
                 dynamic_refine_thres=255, is_sequential_cleaning=False):
        super().__init__()
        self.dynamic_refine_thres = dynamic_refine_thres / 255.
        self.is_sequential_cleaning = is_sequential_cleaning
        self.image_cleaning = nn.Sequential(
            ResidualBlocksWithInputConv(3, mid_channels, num_cleaning_blocks),
            nn.Conv2d(mid_channels, 3, 3, 1, 1, bias=True),
        )
        self.basicvsr = BasicVSRNet(mid_channels, num_propagation_blocks)

    def forward(self, lqs, return_lqs=False):
        n, t, c, h, w = lqs.size()

        for _ in range(0, 3):  # at most 3 cleaning, determined empirically
            if self.is_sequential_cleaning:
                residues = []
                for i in range(0, t):
                    residue_i = self.image_cleaning(lqs[:, i, :, :, :])
                    lqs[:, i, :, :, :] += residue_i
                    residues.append(residue_i)
                residues = torch.stack(residues, dim=1)
            else:  # time -> batch, then apply cleaning at once
                lqs = lqs.view(-1, c, h, w)
                residues = self.image_cleaning(lqs)
                lqs = (lqs + residues).view(n, t, c, h, w)

            # determine whether to continue cleaning
            if torch.mean(torch.abs(residues)) < self.dynamic_refine_thres:
                break

        outputs = self.basicvsr(lqs)
        if return_lqs:
            return outputs, lqs
        return outputs


def main():
    # default training config: batched (non-sequential) cleaning
    generator = RealBasicVSRNet(is_sequential_cleaning=False)
    batch_inputs = torch.rand(1, 3, 3, 8, 8)
    gt = torch.rand(1, 3, 3, 32, 32)
    gt_clean = F.interpolate(gt.view(-1, 3, 32, 32), scale_factor=0.25, mode='bilinear', align_corners=False).view(1, 3, 3, 8, 8)
    fake_g_output, fake_g_lq = generator(batch_inputs, return_lqs=True)
    loss_pix = F.l1_loss(fake_g_output, gt)
    loss_clean = F.l1_loss(fake_g_lq, gt_clean)
    (loss_pix + loss_clean).backward()
    return loss_pix.detach(), generator.image_cleaning[1].weight.grad


loss_pix, cleaning_grad = main()
