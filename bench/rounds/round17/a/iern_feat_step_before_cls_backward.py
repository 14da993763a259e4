# label: hazard raises no-twin
# why: optimize_parameters steps optimizer_Feat (in-place update of netEmoGen / netRecons weights) after backward_Feat(retain_graph=True), then forward_Cls reuses self.emo_feat from the earlier forward, so backward_Cls needs the overwritten EmoGen weights
# source: https://github.com/donydchen/causal_emotion/issues/2
import torch
import torch.nn as nn

torch.manual_seed(0)


class Opt:
    emo_num = 3
    cnfnd_num = 2
    lambda_cnfnd = 5e-4
    lr = 1e-3
    base_lr = 1e-4
    beta1 = 0.5


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU(True))


class Recons(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = conv_block(2 * c, c)

    def forward(self, emo_feat, con_feat):
        return self.body(torch.cat([emo_feat, con_feat], 1))


class Dis(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.fc = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, n))

    def forward(self, x):
        return self.fc(x)


class Cnfnd(nn.Module):
    def __init__(self, c, hw):
        super().__init__()
        self.c, self.hw = c, hw

    def forward(self, center_weights):
        return center_weights.view(-1, self.c, self.hw, self.hw)


class CenterLoss(nn.Module):
    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, x, labels):
        x = x.view(x.size(0), -1)
        return ((x - self.centers[labels]) ** 2).sum(dim=1).mean() / 2.


class IERNModel:
    def __init__(self, opt, c=4, hw=3):
        self.opt = opt
        self.netBase = conv_block(3, c)
        self.netEmoGen = conv_block(c, c)
        self.netConGen = conv_block(c, c)
        self.netRecons = Recons(c)
        self.netEmoDis = Dis(c, opt.cnfnd_num)
        self.netConDis = Dis(c, opt.emo_num)
        self.netCnfnd = Cnfnd(c, hw)
        self.netCls = Dis(c, opt.emo_num)
        self.criterionCE = torch.nn.CrossEntropyLoss()
        self.criterionMSE = torch.nn.MSELoss()
        self.criterionCenter = CenterLoss(opt.cnfnd_num, c * hw * hw)
        self.optimizer_Dis = torch.optim.Adam([{'params': self.netEmoDis.parameters()},
                                               {'params': self.netConDis.parameters()}], lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_Feat = torch.optim.Adam([{'params': self.netEmoGen.parameters()},
                                                {'params': self.netConGen.parameters()},
                                                {'params': self.criterionCenter.parameters()},
                                                {'params': self.netRecons.parameters()}], lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_Cls = torch.optim.Adam([{'params': self.netBase.parameters(), 'lr': opt.base_lr},
                                               {'params': self.netEmoGen.parameters()},
                                               {'params': self.netRecons.parameters(), 'lr': 0.},
                                               {'params': self.netCls.parameters()}], lr=opt.lr, betas=(opt.beta1, 0.999))

    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            for param in net.parameters():
                param.requires_grad = requires_grad

    def set_input(self, input):
        self.input_img = input['img']
        self.emo_label = input['emo']
        self.cnfnd_label = input['cnfnd']
        self.mean_emo_label = torch.ones([self.emo_label.size()[0], self.opt.emo_num]) * (1. / self.opt.emo_num)
        self.mean_cnfnd_label = torch.ones([self.cnfnd_label.size()[0], self.opt.cnfnd_num]) * (1. / self.opt.cnfnd_num)

    def forward_Feat(self):
        self.base_feat = self.netBase(self.input_img)
        self.emo_feat = self.netEmoGen(self.base_feat)
        self.con_feat = self.netConGen(self.base_feat)
        self.rec_base_feat = self.netRecons(self.emo_feat, self.con_feat)

    def forward_Cls(self):
        self.confounders = self.netCnfnd(center_weights=self.criterionCenter.centers.detach())
        self.pred_emo = []
        for idx in range(self.opt.cnfnd_num):
            cur_confounder = self.confounders[idx, :, :, :]
            cur_confounder = cur_confounder.expand(self.emo_feat.size(0), -1, -1, -1)
            cur_com_feat = self.netRecons(self.emo_feat, cur_confounder)
            cur_pred_emo = self.netCls(cur_com_feat)
            self.pred_emo.append(cur_pred_emo)
        self.pred_emo = torch.mean(torch.stack(self.pred_emo), dim=0)

    def backward_Dis(self):
        self.dis_predict_emo = self.netEmoDis(self.emo_feat.detach())
        self.loss_EmoDis = self.criterionCE(self.dis_predict_emo, self.cnfnd_label)
        self.dis_predict_cnfnd = self.netConDis(self.con_feat.detach())
        self.loss_ConDis = self.criterionCE(self.dis_predict_cnfnd, self.emo_label)
        loss_Dis = (self.loss_EmoDis + self.loss_ConDis) / 2.
        loss_Dis.backward()

    def backward_Feat(self):
        self.dis_confused_emo = self.netEmoDis(self.con_feat)
        self.loss_ConGen = self.criterionMSE(torch.nn.functional.softmax(self.dis_confused_emo, dim=-1), self.mean_cnfnd_label)
        self.dis_confused_cnfnd = self.netConDis(self.emo_feat)
        self.loss_EmoGen = self.criterionMSE(torch.nn.functional.softmax(self.dis_confused_cnfnd, dim=-1), self.mean_emo_label)
        loss_Gen = (self.loss_EmoGen + self.loss_ConGen) / 2.
        self.loss_Cnfnd = self.criterionCenter(self.con_feat, self.cnfnd_label) * self.opt.lambda_cnfnd
        self.loss_Recons = self.criterionMSE(self.rec_base_feat, self.base_feat)
        loss_Feat = loss_Gen + self.loss_Cnfnd + self.loss_Recons
        loss_Feat.backward(retain_graph=True)  # Emotion feature still needed to be updated in backward_Cls
        if self.opt.lambda_cnfnd != 0:
            for param in self.criterionCenter.parameters():
                param.grad.data = param.grad.data * (1. / self.opt.lambda_cnfnd)

    def backward_Cls(self):
        self.loss_Cls = self.criterionCE(self.pred_emo, self.emo_label)
        self.loss_Cls.backward()

    def optimize_parameters(self):
        self.forward_Feat()

        self.set_requires_grad([self.netEmoDis, self.netConDis], True)
        self.optimizer_Dis.zero_grad()
        self.backward_Dis()
        self.optimizer_Dis.step()

        self.set_requires_grad([self.netEmoDis, self.netConDis], False)
        self.optimizer_Feat.zero_grad()
        self.backward_Feat()
        self.optimizer_Feat.step()  # <-- IPL001: updates netEmoGen/netRecons weights in place while self.emo_feat's retained graph still needs them

        self.forward_Cls()
        self.optimizer_Cls.zero_grad()
        self.backward_Cls()
        self.optimizer_Cls.step()


model = IERNModel(Opt())
model.set_input({'img': torch.rand(4, 3, 3, 3),
                 'emo': torch.tensor([0, 1, 2, 0]),
                 'cnfnd': torch.tensor([0, 1, 1, 0])})
model.optimize_parameters()
