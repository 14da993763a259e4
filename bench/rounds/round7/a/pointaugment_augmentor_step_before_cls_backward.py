# label: hazard raises no-twin
# why: PointAugment steps optimizer_a right after augLoss.backward(retain_graph=True), rewriting the augmentor's weights in place, and then clsLoss.backward() goes back through aug_pc into that same augmentor graph.
# source: https://github.com/liruihui/PointAugment/issues/15
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NUM = 1.2
W = 1.0


class Augmentor(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv1d(3, dim, 1), nn.BatchNorm1d(dim), nn.ReLU())
        self.rot = nn.Linear(dim + 4, 4)
        self.disp = nn.Conv1d(dim + 4, 3, 1)

    def forward(self, pt, noise):
        B, C, N = pt.shape
        f = self.feat(pt)
        g = torch.max(f, 2)[0]
        quat = self.rot(torch.cat([g, noise[:, :4]], dim=1))
        quat = quat / quat.norm(dim=1, keepdim=True)
        w, x, y, z = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
        rotation = torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                                2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                                2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], dim=1).view(B, 3, 3)
        displacement = self.disp(torch.cat([f, noise[:, None, :4].expand(B, N, 4).transpose(1, 2)], dim=1))
        return torch.bmm(rotation, pt) + displacement


class PointNetCls(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 1)
        self.conv2 = nn.Conv1d(8, 16, 1)
        self.bn1 = nn.BatchNorm1d(8)
        self.bn2 = nn.BatchNorm1d(16)
        self.fc = nn.Linear(16, k)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        feat = torch.max(x, 2)[0]
        return self.fc(feat), None, feat


def cal_loss_raw(pred, gold):
    loss_raw = F.cross_entropy(pred, gold, reduction='none')
    return loss_raw.mean(), loss_raw


def aug_loss(pred, pred_aug, gold, pc_tran, aug_tran, ispn=False):
    cls_pc, _ = cal_loss_raw(pred, gold)
    cls_aug, _ = cal_loss_raw(pred_aug, gold)
    pc_con = F.softmax(pred, dim=-1)
    one_hot = F.one_hot(gold, pred.shape[1]).float()
    pc_con = torch.sum(pc_con * one_hot, dim=-1)
    parameters = torch.max(torch.tensor(NUM), torch.exp(pc_con) * NUM)
    aug_diff = W * torch.abs(1.0 - torch.exp(cls_aug - cls_pc * parameters)).mean()
    return cls_aug + aug_diff


def cls_loss(pred, pred_aug, gold, pc_tran, aug_tran, pc_feat, aug_feat, ispn=False):
    mse_fn = torch.nn.MSELoss()
    cls_pc, _ = cal_loss_raw(pred, gold)
    cls_aug, _ = cal_loss_raw(pred_aug, gold)
    feat_diff = 10.0 * mse_fn(pc_feat, aug_feat)
    return cls_pc + cls_aug + feat_diff


classifier = PointNetCls(4)
augmentor = Augmentor()
optimizer_c = torch.optim.Adam(classifier.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-08, weight_decay=1e-4)
optimizer_a = torch.optim.Adam(augmentor.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-08, weight_decay=1e-4)

trainDataLoader = [(torch.rand(4, 16, 3), torch.tensor([[0], [1], [2], [3]]))]
for batch_id, data in enumerate(trainDataLoader, 0):
    points, target = data
    target = target[:, 0]
    points = points.transpose(2, 1).contiguous()
    noise = 0.02 * torch.randn(4, 1024)

    classifier = classifier.train()
    augmentor = augmentor.train()
    optimizer_a.zero_grad()
    aug_pc = augmentor(points, noise)

    pred_pc, pc_tran, pc_feat = classifier(points)
    pred_aug, aug_tran, aug_feat = classifier(aug_pc)
    augLoss = aug_loss(pred_pc, pred_aug, target, pc_tran, aug_tran)

    augLoss.backward(retain_graph=True)
    optimizer_a.step()  # <-- IPL001: augmentor weights change in place while clsLoss still needs aug_pc's graph

    optimizer_c.zero_grad()
    clsLoss = cls_loss(pred_pc, pred_aug, target, pc_tran, aug_tran, pc_feat, aug_feat)
    clsLoss.backward(retain_graph=True)
    optimizer_c.step()
