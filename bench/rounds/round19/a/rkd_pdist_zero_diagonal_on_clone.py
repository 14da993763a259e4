# label: safe
# why: pdist clones the sqrt output before zeroing its diagonal, so the result that sqrt's backward needs is never written, and the student's distance loss backpropagates cleanly.
# source: https://github.com/lenscloth/RKD/blob/0e0d3c2e161024f204ab26470bae2d0ac8018742/metric/utils.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pdist(e, squared=False, eps=1e-12):
    e_square = e.pow(2).sum(dim=1)
    prod = e @ e.t()
    res = (e_square.unsqueeze(1) + e_square.unsqueeze(0) - 2 * prod).clamp(min=eps)

    if not squared:
        res = res.sqrt()

    res = res.clone()
    res[range(len(e)), range(len(e))] = 0
    return res


class RKdAngle(nn.Module):
    def forward(self, student, teacher):
        with torch.no_grad():
            td = (teacher.unsqueeze(0) - teacher.unsqueeze(1))
            norm_td = F.normalize(td, p=2, dim=2)
            t_angle = torch.bmm(norm_td, norm_td.transpose(1, 2)).view(-1)

        sd = (student.unsqueeze(0) - student.unsqueeze(1))
        norm_sd = F.normalize(sd, p=2, dim=2)
        s_angle = torch.bmm(norm_sd, norm_sd.transpose(1, 2)).view(-1)
        return F.smooth_l1_loss(s_angle, t_angle, reduction='mean')


class RkdDistance(nn.Module):
    def forward(self, student, teacher):
        with torch.no_grad():
            t_d = pdist(teacher, squared=False)
            mean_td = t_d[t_d > 0].mean()
            t_d = t_d / mean_td

        d = pdist(student, squared=False)
        mean_d = d[d > 0].mean()
        d = d / mean_d
        return F.smooth_l1_loss(d, t_d, reduction='mean')


def embedding_net(dim):
    return nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, dim))


teacher = embedding_net(16).eval()
student = embedding_net(16)
dist_criterion = RkdDistance()
angle_criterion = RKdAngle()
optimizer = torch.optim.SGD(student.parameters(), lr=0.01)

images = torch.randn(6, 3, 16, 16)
with torch.no_grad():
    t_e = teacher(images)
s_e = student(images)
loss = 25 * dist_criterion(s_e, t_e) + 50 * angle_criterion(s_e, t_e)
optimizer.zero_grad()
loss.backward()
optimizer.step()
