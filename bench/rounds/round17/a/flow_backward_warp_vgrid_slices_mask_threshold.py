# label: safe
# why: the normalised sampling grid is written channel by channel from .clone()d reads of the add result (AddBackward saves nothing), and the validity mask is thresholded in place on grid_sample's output, which grid_sample's backward never reads, so the flow gradient is unaffected
# source: https://github.com/sniklaus/softmax-splatting/issues/10
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


def warp_flow_backward(x, flo):
    """
    warp an image/tensor (im2) back to im1, according to the optical flow
    x: [B, C, H, W] (im2)
    flo: [B, 2, H, W] flow
    """
    B, C, H, W = x.size()
    xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
    yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    grid = torch.cat((xx, yy), 1).float()

    if x.is_cuda:
        grid = grid.cuda()
    vgrid = Variable(grid) + flo

    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0

    vgrid = vgrid.permute(0, 2, 3, 1)
    output = nn.functional.grid_sample(x, vgrid, align_corners=True)
    mask = torch.autograd.Variable(torch.ones(x.size()))
    mask = nn.functional.grid_sample(mask, vgrid, align_corners=True)

    mask[mask < 0.9999] = 0
    mask[mask > 0] = 1

    return output * mask


class FlowHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 8, 3, 1, 1), nn.LeakyReLU(0.1), nn.Conv2d(8, 2, 3, 1, 1))

    def forward(self, im1, im2):
        return self.net(torch.cat([im1, im2], 1)) * 2.0


flow_net = FlowHead()
frame1 = torch.rand(2, 3, 12, 12)
frame2 = torch.rand(2, 3, 12, 12)

flow_12 = flow_net(frame1, frame2)
frame1_rec = warp_flow_backward(frame2, flow_12)
photometric = (frame1_rec - frame1).abs().mean()
photometric.backward()
