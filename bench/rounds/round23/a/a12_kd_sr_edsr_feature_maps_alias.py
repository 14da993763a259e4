# label: hazard silent
# why: EDSR.forward appends `res` (the body3 output) to feature_maps and then does `res += x` in place, so the distillation feature that the loss compares is silently the post-residual map instead of the body3 feature the list was meant to hold.
# source: https://github.com/Vincent-Hoo/Knowledge-Distillation-for-Super-resolution/issues/2 (code/models/edsr.py at 40993ae)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def default_conv(in_channels, out_channels, kernel_size, bias=True):
    return nn.Conv2d(in_channels, out_channels, kernel_size, padding=(kernel_size // 2), bias=bias)


class ResBlock(nn.Module):
    def __init__(self, conv, n_feats, kernel_size, bias=True, bn=False, act=nn.ReLU(True), res_scale=1):
        super(ResBlock, self).__init__()
        m = []
        for i in range(2):
            m.append(conv(n_feats, n_feats, kernel_size, bias=bias))
            if bn:
                m.append(nn.BatchNorm2d(n_feats))
            if i == 0:
                m.append(act)
        self.body = nn.Sequential(*m)
        self.res_scale = res_scale

    def forward(self, x):
        res = self.body(x).mul(self.res_scale)
        res += x
        return res


class EDSR(nn.Module):
    def __init__(self, n_resblocks=3, n_feats=8, scale=2, n_colors=3, conv=default_conv):
        super(EDSR, self).__init__()
        kernel_size = 3
        act = nn.ReLU(True)
        m_head = [conv(n_colors, n_feats, kernel_size)]
        self.block_num = [int(n_resblocks / 3), int(2 * n_resblocks / 3) - int(n_resblocks / 3), n_resblocks - int(2 * n_resblocks / 3)]
        m_body1 = [ResBlock(conv, n_feats, kernel_size, act=act, res_scale=0.1) for _ in range(self.block_num[0])]
        m_body2 = [ResBlock(conv, n_feats, kernel_size, act=act, res_scale=0.1) for _ in range(self.block_num[1])]
        m_body3 = [ResBlock(conv, n_feats, kernel_size, act=act, res_scale=0.1) for _ in range(self.block_num[2])]
        m_body3.append(conv(n_feats, n_feats, kernel_size))
        m_tail = [conv(n_feats, n_colors * scale * scale, kernel_size), nn.PixelShuffle(scale)]
        self.head = nn.Sequential(*m_head)
        self.body1 = nn.Sequential(*m_body1)
        self.body2 = nn.Sequential(*m_body2)
        self.body3 = nn.Sequential(*m_body3)
        self.tail = nn.Sequential(*m_tail)

    def forward(self, x):
        feature_maps = []
        x = self.head(x)
        feature_maps.append(x)

        res = self.body1(x)
        feature_maps.append(res)
        res = self.body2(res)
        feature_maps.append(res)
        res = self.body3(res)
        feature_maps.append(res)

        res += x  # <-- IPL002

        x = self.tail(res)
        return feature_maps, x


def spatial_similarity(fm):
    fm = fm.view(fm.size(0), fm.size(1), -1)
    norm_fm = fm / (torch.sqrt(torch.sum(torch.pow(fm, 2), 1)).unsqueeze(1).expand(fm.shape) + 1e-8)
    s = norm_fm.transpose(1, 2).bmm(norm_fm)
    s = s.unsqueeze(1)
    return s


def main():
    teacher = EDSR(n_resblocks=6, n_feats=8)
    student = EDSR(n_resblocks=3, n_feats=8)
    for p in teacher.parameters():
        p.requires_grad = False
    lr = torch.rand(2, 3, 6, 6)
    hr = torch.rand(2, 3, 12, 12)

    student_fms, student_sr = student(lr)
    teacher_fms, teacher_sr = teacher(lr)
    features = [1, 2, 3]
    student_fms = [student_fms[ind] for ind in features]
    teacher_fms = [teacher_fms[ind] for ind in features]
    aggregated_student_fms = [spatial_similarity(fm) for fm in student_fms]
    aggregated_teacher_fms = [spatial_similarity(fm) for fm in teacher_fms]

    sr_loss = F.l1_loss(student_sr, hr)
    feature_loss = sum(F.l1_loss(s, t) for s, t in zip(aggregated_student_fms, aggregated_teacher_fms))
    loss = sr_loss + 0.5 * feature_loss
    loss.backward()
    return loss.detach(), student.head[0].weight.grad


loss, head_grad = main()
