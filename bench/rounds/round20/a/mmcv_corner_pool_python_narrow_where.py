# label: safe no-twin
# why: the python CornerPool path writes each step into a narrow() view of output = x.clone() via cur_temp[...] = torch.where(...); the overwritten value was cloned into max_temp first and where() keeps only its mask for backward, so gradients through the in-place view writes are correct.
# source: https://github.com/open-mmlab/mmcv/commit/61ab6d182baaa259175ef587007e210e7a5fbf1e (fix for torch130: max_temp clone + where)
import torch
from torch import nn

torch.manual_seed(0)


def _corner_pool(x, dim, flip):
    size = x.size(dim)
    output = x.clone()

    ind = 1
    while ind < size:
        if flip:
            cur_start = 0
            cur_len = size - ind
            next_start = ind
            next_len = size - ind
        else:
            cur_start = ind
            cur_len = size - ind
            next_start = 0
            next_len = size - ind

        # max_temp should be cloned for backward computation
        max_temp = output.narrow(dim, cur_start, cur_len).clone()
        cur_temp = output.narrow(dim, cur_start, cur_len)
        next_temp = output.narrow(dim, next_start, next_len)

        cur_temp[...] = torch.where(max_temp > next_temp, max_temp, next_temp)

        ind = ind << 1

    return output


class CornerPool(nn.Module):
    cummax_dim_flip = {
        'bottom': (2, False),
        'left': (3, True),
        'right': (3, False),
        'top': (2, True),
    }

    def __init__(self, mode):
        super(CornerPool, self).__init__()
        assert mode in self.cummax_dim_flip
        self.mode = mode

    def forward(self, x):
        dim, flip = self.cummax_dim_flip[self.mode]
        return _corner_pool(x, dim, flip)


class CornerHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.top_pool = CornerPool('top')
        self.left_pool = CornerPool('left')
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        feat = self.conv(x)
        pooled = self.top_pool(feat) + self.left_pool(feat)
        return self.out(pooled)


def main():
    head = CornerHead()
    imgs = torch.randn(2, 3, 6, 6)
    heat = head(imgs)
    loss = heat.pow(2).mean()
    loss.backward()
    return heat.detach(), head.conv.weight.grad


heat, grad = main()
