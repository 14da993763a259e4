# label: hazard raises
# why: the training step normalizes the image-specific CAM with `IS_cam /= F.adaptive_max_pool2d(IS_cam, (1, 1)) + 1e-5`, overwriting the tensor that adaptive_max_pool2d (and the producing ReLU) saved for backward
# source: https://github.com/chenqi1126/SIPE/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(15)


class Net(nn.Module):
    def __init__(self, num_cls=4):
        super(Net, self).__init__()
        self.num_cls = num_cls
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.classifier = nn.Conv2d(16, num_cls - 1, 1, bias=False)
        self.side1 = nn.Conv2d(8, 8, 1, bias=False)
        self.side2 = nn.Conv2d(16, 8, 1, bias=False)

    def get_seed(self, norm_cam, label, feature):
        n, c, h, w = norm_cam.shape
        # iou evalution
        seeds = torch.zeros((n, h, w, c))
        feature_s = feature.view(n, -1, h * w)
        feature_s = feature_s / (torch.norm(feature_s, dim=1, keepdim=True) + 1e-5)
        correlation = F.relu(torch.matmul(feature_s.transpose(2, 1), feature_s), inplace=True).unsqueeze(1)
        cam_flatten = norm_cam.view(n, -1, h * w).unsqueeze(2)
        inter = (correlation * cam_flatten).sum(-1)
        union = correlation.sum(-1) + cam_flatten.sum(-1) - inter
        miou = (inter / union).view(n, self.num_cls, h, w)
        miou[:, 0] = miou[:, 0] * 0.5
        probs = F.softmax(miou, dim=1)
        belonging = miou.argmax(1)
        seeds = seeds.scatter_(-1, belonging.view(n, h, w, 1), 1).permute(0, 3, 1, 2).contiguous()
        seeds = seeds * label
        return seeds, probs

    def get_prototype(self, seeds, feature):
        n, c, h, w = feature.shape
        seeds = F.interpolate(seeds, feature.shape[2:], mode='nearest')
        crop_feature = seeds.unsqueeze(2) * feature.unsqueeze(1)  # seed:[n,21,1,h,w], feature:[n,1,c,h,w]
        prototype = F.adaptive_avg_pool2d(crop_feature.view(-1, c, h, w), (1, 1)).view(n, self.num_cls, c, 1, 1)
        return prototype

    def reactivate(self, prototype, feature):
        IS_cam = F.relu(torch.cosine_similarity(feature.unsqueeze(1), prototype, dim=2))
        IS_cam = F.interpolate(IS_cam, feature.shape[2:], mode='bilinear', align_corners=True)
        return IS_cam

    def forward(self, x, valid_mask):
        x1 = self.stage1(x)
        x2 = self.stage2(x1)
        side1 = self.side1(x1.detach())
        side2 = self.side2(x2.detach())
        hie_fea = torch.cat([F.interpolate(side1 / (torch.norm(side1, dim=1, keepdim=True) + 1e-5), side2.shape[2:],
                                           mode='bilinear', align_corners=True),
                             side2 / (torch.norm(side2, dim=1, keepdim=True) + 1e-5)], dim=1)
        sem_feature = x2
        cam = self.classifier(x2)
        score = F.adaptive_avg_pool2d(cam, 1)

        norm_cam = F.relu(cam)
        norm_cam = norm_cam / (F.adaptive_max_pool2d(norm_cam, (1, 1)) + 1e-5)
        cam_bkg = 1 - torch.max(norm_cam, dim=1)[0].unsqueeze(1)
        norm_cam = torch.cat([cam_bkg, norm_cam], dim=1)
        norm_cam = F.interpolate(norm_cam, side2.shape[2:], mode='bilinear', align_corners=True) * valid_mask

        seeds, probs = self.get_seed(norm_cam.clone(), valid_mask.clone(), sem_feature.clone())
        prototypes = self.get_prototype(seeds, hie_fea)
        IS_cam = self.reactivate(prototypes, hie_fea)
        return {"score": score, "cam": norm_cam, "seeds": seeds, "prototypes": prototypes, "IS_cam": IS_cam,
                "probs": probs}


model = Net(num_cls=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
img = torch.randn(2, 3, 16, 16)
n, c, h, w = img.shape
label = torch.tensor([[1., 0., 1.], [0., 1., 1.]]).unsqueeze(-1).unsqueeze(-1)
valid_mask = torch.ones(2, 4, 16, 16)
valid_mask[:, 1:] = valid_mask[:, 1:] * label
valid_mask_lowres = F.interpolate(valid_mask, size=(h // 4, w // 4), mode='nearest')

outputs = model.forward(img, valid_mask_lowres)
score = outputs['score']
norm_cam = outputs['cam']
IS_cam = outputs['IS_cam']

lossCLS = F.multilabel_soft_margin_loss(score.flatten(1), label.flatten(1))
IS_cam /= F.adaptive_max_pool2d(IS_cam, (1, 1)) + 1e-5  # <-- IPL001: IS_cam was saved by adaptive_max_pool2d (and the upsampling) for backward
lossGSC = torch.mean(torch.abs(norm_cam - IS_cam))

losses = lossCLS + lossGSC
optimizer.zero_grad()
losses.backward()
optimizer.step()
