# label: hazard silent
# why: cropBox zero-pads everything outside the current person box by writing into `img`, the whole (mean-subtracted) frame that crop_from_dets passes in for every detection; from the second person on, the crops are cut from a frame already blanked around the first person ("only one man rendered").
# source: https://github.com/MVIG-SJTU/AlphaPose/commit/f8e1960a97f8756bfc22ec26e3c0531ec2eaa7a5
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

inputResH, inputResW = 32, 24
outputResH, outputResW = 8, 6


def get_3rd_point(a, b):
    direct = a - b
    return b + torch.stack([-direct[1], direct[0]])


def get_affine_transform(src, dst):
    """Affine map (2x3) sending the three src points onto the three dst points (cv2.getAffineTransform)."""
    A = torch.cat([src, torch.ones(3, 1)], dim=1)
    return torch.linalg.solve(A, dst).T


def warp_affine(img, trans, resW, resH):
    """cv2.warpAffine(img, trans, (resW, resH), flags=INTER_LINEAR) for a CxHxW tensor."""
    M = torch.cat([trans, torch.tensor([[0.0, 0.0, 1.0]])], dim=0)
    Minv = torch.linalg.inv(M)
    ys, xs = torch.meshgrid(torch.arange(resH, dtype=torch.float32), torch.arange(resW, dtype=torch.float32),
                            indexing='ij')
    dst = torch.stack([xs, ys, torch.ones_like(xs)], dim=-1)
    src = dst @ Minv.T
    H, W = img.shape[1:]
    grid = torch.stack([src[..., 0] / (W - 1) * 2 - 1, src[..., 1] / (H - 1) * 2 - 1], dim=-1)
    return F.grid_sample(img[None], grid[None], mode='bilinear', align_corners=True)[0]


def cropBox(img, ul, br, resH, resW):
    ul = ul.int()
    br = (br - 1).int()
    lenH = max((br[1] - ul[1]).item(), (br[0] - ul[0]).item() * resH / resW)
    lenW = lenH * resW / resH
    if img.dim() == 2:
        img = img[None, :]

    box_shape = [(br[1] - ul[1]).item(), (br[0] - ul[0]).item()]
    pad_size = [(lenH - box_shape[0]) // 2, (lenW - box_shape[1]) // 2]
    # Padding Zeros
    if ul[1] > 0:
        img[:, :ul[1], :] = 0  # <-- IPL004
    if ul[0] > 0:
        img[:, :, :ul[0]] = 0  # <-- IPL004
    if br[1] < img.shape[1] - 1:
        img[:, br[1] + 1:, :] = 0  # <-- IPL004
    if br[0] < img.shape[2] - 1:
        img[:, :, br[0] + 1:] = 0  # <-- IPL004

    src = torch.zeros(3, 2)
    dst = torch.zeros(3, 2)
    src[0, :] = torch.tensor([ul[0] - pad_size[1], ul[1] - pad_size[0]], dtype=torch.float32)
    src[1, :] = torch.tensor([br[0] + pad_size[1], br[1] + pad_size[0]], dtype=torch.float32)
    dst[0, :] = 0
    dst[1, :] = torch.tensor([resW - 1, resH - 1], dtype=torch.float32)
    src[2:, :] = get_3rd_point(src[0, :], src[1, :])
    dst[2:, :] = get_3rd_point(dst[0, :], dst[1, :])

    trans = get_affine_transform(src, dst)
    return warp_affine(img, trans, resW, resH)


def crop_from_dets(img, boxes, inps, pt1, pt2):
    '''
    Crop human from origin image according to Dectecion Results
    '''
    imght = img.size(1)
    imgwidth = img.size(2)
    tmp_img = img
    tmp_img[0].add_(-0.406)
    tmp_img[1].add_(-0.457)
    tmp_img[2].add_(-0.480)
    for i, box in enumerate(boxes):
        upLeft = torch.Tensor((float(box[0]), float(box[1])))
        bottomRight = torch.Tensor((float(box[2]), float(box[3])))

        ht = bottomRight[1] - upLeft[1]
        width = bottomRight[0] - upLeft[0]
        if width > 100:
            scaleRate = 0.2
        else:
            scaleRate = 0.3

        upLeft[0] = max(0, upLeft[0] - width * scaleRate / 2)
        upLeft[1] = max(0, upLeft[1] - ht * scaleRate / 2)
        bottomRight[0] = max(min(imgwidth - 1, bottomRight[0] + width * scaleRate / 2), upLeft[0] + 5)
        bottomRight[1] = max(min(imght - 1, bottomRight[1] + ht * scaleRate / 2), upLeft[1] + 5)

        inps[i] = cropBox(tmp_img, upLeft, bottomRight, inputResH, inputResW)
        pt1[i] = upLeft
        pt2[i] = bottomRight

    return inps, pt1, pt2


class FastPose(nn.Module):
    """Tiny stand-in for the SPPE pose network: crop -> 4 keypoint heatmaps."""

    def __init__(self, nJoints=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.conv_out = nn.Conv2d(8, nJoints, 1)

    def forward(self, x):
        return self.conv_out(self.features(x))


def main():
    torch.manual_seed(0)
    pose_model = FastPose()
    # one RGB frame (already in [0, 1]) with two detected people side by side
    inp = torch.rand(3, 48, 64) * 0.5 + 0.25
    boxes = torch.tensor([[4.0, 6.0, 22.0, 40.0], [38.0, 8.0, 56.0, 42.0]])
    with torch.no_grad():
        inps = torch.zeros(boxes.size(0), 3, inputResH, inputResW)
        pt1 = torch.zeros(boxes.size(0), 2)
        pt2 = torch.zeros(boxes.size(0), 2)
        inps, pt1, pt2 = crop_from_dets(inp, boxes, inps, pt1, pt2)

    # fine-tune the pose head on pseudo-label heatmaps of the crops
    hm = pose_model(inps)
    target = torch.zeros_like(hm)
    target[:, :, outputResH // 2, outputResW // 2] = 1.0
    loss = F.mse_loss(hm, target)
    loss.backward()
    return inps, hm, loss, pose_model


inps, hm, loss, pose_model = main()
print(float(inps[1].abs().mean()), float(loss))
