# label: hazard silent
# why: the corner Decoder de-normalizes the regression map channel by channel with slice assignments on its argument, so PIXOR's `reg` (concatenated into pred after decoding) and the regression loss silently see de-normalized values.
# source: https://github.com/WUSTL-CSPL/SlowLiDAR/issues/2
import torch
import torch.nn as nn

torch.manual_seed(0)


class Header(nn.Module):
    def __init__(self, in_ch=8):
        super(Header, self).__init__()
        self.conv1 = nn.Conv2d(in_ch, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.clshead = nn.Conv2d(8, 1, 3, padding=1)
        self.reghead = nn.Conv2d(8, 6, 3, padding=1)

    def forward(self, x):
        x = self.bn1(self.conv1(x))
        cls = torch.sigmoid(self.clshead(x))
        reg = self.reghead(x)
        return cls, reg


class Decoder(nn.Module):
    def __init__(self):
        super(Decoder, self).__init__()
        self.geometry = [-2.0, 2.0, 0.0, 2.4]
        self.grid_size = 0.4
        self.target_mean = [0.008, 0.001, 0.202, 0.2, 0.43, 1.368]
        self.target_std_dev = [0.866, 0.5, 0.954, 0.668, 0.09, 0.111]

    def forward(self, x):
        device = torch.device("cpu")
        for i in range(6):
            x[:, i, :, :] = x[:, i, :, :] * self.target_std_dev[i] + self.target_mean[i]  # <-- IPL004: de-normalizes the caller's reg map in place; PIXOR still uses reg afterwards

        cos_t, sin_t, dx, dy, log_w, log_l = torch.chunk(x, 6, dim=1)
        theta = torch.atan2(sin_t, cos_t)
        cos_t = torch.cos(theta)
        sin_t = torch.sin(theta)

        x = torch.arange(self.geometry[2], self.geometry[3], self.grid_size, dtype=torch.float32, device=device)
        y = torch.arange(self.geometry[0], self.geometry[1], self.grid_size, dtype=torch.float32, device=device)
        yy, xx = torch.meshgrid([y, x], indexing="ij")
        centre_y = yy + dy
        centre_x = xx + dx
        l = log_l.exp()
        w = log_w.exp()
        rear_left_x = centre_x - l / 2 * cos_t - w / 2 * sin_t
        rear_left_y = centre_y - l / 2 * sin_t + w / 2 * cos_t
        front_right_x = centre_x + l / 2 * cos_t + w / 2 * sin_t
        front_right_y = centre_y + l / 2 * sin_t - w / 2 * cos_t
        decoded_reg = torch.cat([rear_left_x, rear_left_y, front_right_x, front_right_y], dim=1)
        return decoded_reg


class PIXOR(nn.Module):
    def __init__(self, use_decode=True):
        super(PIXOR, self).__init__()
        self.backbone = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.header = Header()
        self.corner_decoder = Decoder()
        self.use_decode = use_decode

    def forward(self, x):
        features = self.backbone(x)
        cls, reg = self.header(features)
        if self.use_decode:
            decoded = self.corner_decoder(reg)
            pred = torch.cat([cls, reg, decoded], dim=1)
        else:
            pred = torch.cat([cls, reg], dim=1)
        return pred


net = PIXOR()
bev = torch.randn(2, 4, 10, 6)
label_map = torch.randn(2, 7, 10, 6)
pred = net(bev)
cls_loss = nn.functional.binary_cross_entropy(pred[:, 0], (label_map[:, 0] > 0).float())
loc_loss = nn.functional.smooth_l1_loss(pred[:, 1:7], label_map[:, 1:7])
corner_loss = pred[:, 7:].abs().mean() * 0.01
loss = cls_loss + loc_loss + corner_loss
loss.backward()
