# label: hazard silent
# why: rescale_flow splits the flow with `flow.chunk(2, dim=1)` (views) and scales them with `u *= u_scale`, so it also rewrites the caller's tensor; IRR_PWC calls it on flow_cont_f only to build the warping argument, but flow_cont_f itself is rescaled too, so during evaluation refine_flow gets the wrong scale and the returned flow is doubly rescaled.
# source: https://github.com/visinf/irr/issues/17
import torch
import torch.nn as nn
import torch.nn.functional as tf

torch.manual_seed(0)


def conv(in_planes, out_planes, kernel_size=3, stride=1, dilation=1, isReLU=True):
    if isReLU:
        return nn.Sequential(
            nn.Conv2d(in_planes, out_planes, kernel_size=kernel_size, stride=stride, dilation=dilation,
                      padding=((kernel_size - 1) * dilation) // 2, bias=True),
            nn.LeakyReLU(0.1, inplace=True)
        )
    else:
        return nn.Sequential(
            nn.Conv2d(in_planes, out_planes, kernel_size=kernel_size, stride=stride, dilation=dilation,
                      padding=((kernel_size - 1) * dilation) // 2, bias=True)
        )


def upsample2d_as(inputs, target_as, mode="bilinear"):
    _, _, h, w = target_as.size()
    return tf.interpolate(inputs, [h, w], mode=mode, align_corners=True)


def rescale_flow(flow, div_flow, width_im, height_im, to_local=True):
    if to_local:
        u_scale = float(flow.size(3) / width_im / div_flow)
        v_scale = float(flow.size(2) / height_im / div_flow)
    else:
        u_scale = float(width_im * div_flow / flow.size(3))
        v_scale = float(height_im * div_flow / flow.size(2))

    u, v = flow.chunk(2, dim=1)
    u *= u_scale  # <-- IPL004
    v *= v_scale  # <-- IPL004

    return torch.cat([u, v], dim=1)


def compute_cost_volume(feat1, feat2, param_dict):
    max_disp = param_dict["max_disp"]
    _, _, h, w = feat1.size()
    feat2_pad = tf.pad(feat2, [max_disp] * 4)
    cost = []
    for dy in range(2 * max_disp + 1):
        for dx in range(2 * max_disp + 1):
            cost.append((feat1 * feat2_pad[:, :, dy:dy + h, dx:dx + w]).mean(dim=1, keepdim=True))
    return torch.cat(cost, dim=1)


class FeatureExtractor(nn.Module):
    def __init__(self, num_chs):
        super(FeatureExtractor, self).__init__()
        self.num_chs = num_chs
        self.convs = nn.ModuleList()

        for l, (ch_in, ch_out) in enumerate(zip(num_chs[:-1], num_chs[1:])):
            layer = nn.Sequential(
                conv(ch_in, ch_out, stride=2),
                conv(ch_out, ch_out)
            )
            self.convs.append(layer)

    def forward(self, x):
        feature_pyramid = []
        for conv in self.convs:
            x = conv(x)
            feature_pyramid.append(x)

        return feature_pyramid[::-1]


def get_grid(x):
    grid_H = torch.linspace(-1.0, 1.0, x.size(3)).view(1, 1, 1, x.size(3)).expand(x.size(0), 1, x.size(2), x.size(3))
    grid_V = torch.linspace(-1.0, 1.0, x.size(2)).view(1, 1, x.size(2), 1).expand(x.size(0), 1, x.size(2), x.size(3))
    grid = torch.cat([grid_H, grid_V], 1)
    return grid.float().requires_grad_(False)


class WarpingLayer(nn.Module):
    def forward(self, x, flow, height_im, width_im, div_flow):
        flo_list = []
        flo_w = flow[:, 0] * 2 / max(width_im - 1, 1) / div_flow
        flo_h = flow[:, 1] * 2 / max(height_im - 1, 1) / div_flow
        flo_list.append(flo_w)
        flo_list.append(flo_h)
        flow_for_grid = torch.stack(flo_list).transpose(0, 1)
        grid = torch.add(get_grid(x), flow_for_grid).transpose(1, 2).transpose(2, 3)
        x_warp = tf.grid_sample(x, grid, align_corners=True)

        mask = torch.ones(x.size(), requires_grad=False)
        mask = tf.grid_sample(mask, grid, align_corners=True)
        mask = (mask >= 1.0).float()

        return x_warp * mask


class FlowEstimatorDense(nn.Module):
    def __init__(self, ch_in):
        super(FlowEstimatorDense, self).__init__()
        self.conv1 = conv(ch_in, 16)
        self.conv2 = conv(ch_in + 16, 16)
        self.conv_last = conv(ch_in + 32, 2, isReLU=False)

    def forward(self, x):
        x1 = torch.cat([self.conv1(x), x], dim=1)
        x2 = torch.cat([self.conv2(x1), x1], dim=1)
        x_out = self.conv_last(x2)
        return x2, x_out


class ContextNetwork(nn.Module):
    def __init__(self, ch_in):
        super(ContextNetwork, self).__init__()
        self.convs = nn.Sequential(
            conv(ch_in, 16, 3, 1, 1),
            conv(16, 16, 3, 1, 2),
            conv(16, 2, isReLU=False)
        )

    def forward(self, x):
        return self.convs(x)


def subtract_mean(input):
    return input - input.mean(2).mean(2).unsqueeze(2).unsqueeze(2).expand_as(input)


class RefineFlow(nn.Module):
    def __init__(self, ch_in):
        super(RefineFlow, self).__init__()
        self.kernel_size = 3
        self.pad_size = 1
        self.pad_ftn = nn.ReplicationPad2d(self.pad_size)
        self.convs = nn.Sequential(
            conv(ch_in, 16, 3, 1, 1),
            conv(16, self.kernel_size * self.kernel_size, 3, 1, 1)
        )
        self.softmax_feat = nn.Softmax(dim=1)
        self.unfold_flow = nn.Unfold(kernel_size=(self.kernel_size, self.kernel_size))
        self.unfold_kernel = nn.Unfold(kernel_size=(1, 1))

    def forward(self, flow, diff_img, feature):
        b, _, h, w = flow.size()
        flow_m = subtract_mean(flow)
        norm2_img = torch.norm(diff_img, p=2, dim=1, keepdim=True)
        feat = self.convs(torch.cat([flow_m, norm2_img, feature], dim=1))
        feat_kernel = self.softmax_feat(-feat ** 2)
        flow_x = flow[:, 0].unsqueeze(1)
        flow_y = flow[:, 1].unsqueeze(1)
        flow_x_unfold = self.unfold_flow(self.pad_ftn(flow_x))
        flow_y_unfold = self.unfold_flow(self.pad_ftn(flow_y))
        feat_kernel_unfold = self.unfold_kernel(feat_kernel)
        flow_out_x = torch.sum(flow_x_unfold * feat_kernel_unfold, dim=1).unsqueeze(1).view(b, 1, h, w)
        flow_out_y = torch.sum(flow_y_unfold * feat_kernel_unfold, dim=1).unsqueeze(1).view(b, 1, h, w)
        return torch.cat([flow_out_x, flow_out_y], dim=1)


class PWCNet(nn.Module):
    def __init__(self, div_flow=0.05):
        super(PWCNet, self).__init__()
        self._div_flow = div_flow
        self.search_range = 1
        self.num_chs = [3, 8, 12]
        self.output_level = 1
        self.leakyRELU = nn.LeakyReLU(0.1, inplace=True)

        self.feature_pyramid_extractor = FeatureExtractor(self.num_chs)
        self.warping_layer = WarpingLayer()

        self.dim_corr = (self.search_range * 2 + 1) ** 2
        self.num_ch_in_flo = self.dim_corr + 8 + 2
        self.flow_estimators = FlowEstimatorDense(self.num_ch_in_flo)
        self.context_networks = ContextNetwork(self.num_ch_in_flo + 32 + 2)
        self.conv_1x1 = nn.ModuleList([conv(12, 8, kernel_size=1, stride=1, dilation=1),
                                       conv(8, 8, kernel_size=1, stride=1, dilation=1)])
        self.refine_flow = RefineFlow(2 + 1 + 8)
        self.corr_params = {"max_disp": self.search_range}

    def forward(self, input_dict):
        x1_raw = input_dict['input1']
        x2_raw = input_dict['input2']
        batch_size, _, height_im, width_im = x1_raw.size()

        x1_pyramid = self.feature_pyramid_extractor(x1_raw)
        x2_pyramid = self.feature_pyramid_extractor(x2_raw)

        output_dict = {}
        flows = []

        _, _, h_x1, w_x1, = x1_pyramid[0].size()
        flow_f = torch.zeros(batch_size, 2, h_x1, w_x1).float()
        flow_b = torch.zeros(batch_size, 2, h_x1, w_x1).float()

        for l, (x1, x2) in enumerate(zip(x1_pyramid, x2_pyramid)):
            if l == 0:
                x2_warp = x2
                x1_warp = x1
            else:
                flow_f = upsample2d_as(flow_f, x1, mode="bilinear")
                flow_b = upsample2d_as(flow_b, x2, mode="bilinear")
                x2_warp = self.warping_layer(x2, flow_f, height_im, width_im, self._div_flow)
                x1_warp = self.warping_layer(x1, flow_b, height_im, width_im, self._div_flow)

            out_corr_f = compute_cost_volume(x1, x2_warp, self.corr_params)
            out_corr_b = compute_cost_volume(x2, x1_warp, self.corr_params)
            out_corr_relu_f = self.leakyRELU(out_corr_f)
            out_corr_relu_b = self.leakyRELU(out_corr_b)

            x1_1by1 = self.conv_1x1[l](x1)
            x2_1by1 = self.conv_1x1[l](x2)

            flow_f = rescale_flow(flow_f, self._div_flow, width_im, height_im, to_local=True)
            flow_b = rescale_flow(flow_b, self._div_flow, width_im, height_im, to_local=True)

            x_intm_f, flow_res_f = self.flow_estimators(torch.cat([out_corr_relu_f, x1_1by1, flow_f], dim=1))
            x_intm_b, flow_res_b = self.flow_estimators(torch.cat([out_corr_relu_b, x2_1by1, flow_b], dim=1))
            flow_est_f = flow_f + flow_res_f
            flow_est_b = flow_b + flow_res_b

            flow_cont_f = flow_est_f + self.context_networks(torch.cat([x_intm_f, flow_est_f], dim=1))
            flow_cont_b = flow_est_b + self.context_networks(torch.cat([x_intm_b, flow_est_b], dim=1))

            # refinement
            img1_resize = upsample2d_as(x1_raw, flow_f, mode="bilinear")
            img2_resize = upsample2d_as(x2_raw, flow_b, mode="bilinear")
            img2_warp = self.warping_layer(img2_resize, rescale_flow(flow_cont_f, self._div_flow, width_im, height_im, to_local=False), height_im, width_im, self._div_flow)
            img1_warp = self.warping_layer(img1_resize, rescale_flow(flow_cont_b, self._div_flow, width_im, height_im, to_local=False), height_im, width_im, self._div_flow)

            flow_f = self.refine_flow(flow_cont_f.detach(), img1_resize - img2_warp, x1_1by1)
            flow_b = self.refine_flow(flow_cont_b.detach(), img2_resize - img1_warp, x2_1by1)

            flow_cont_f = rescale_flow(flow_cont_f, self._div_flow, width_im, height_im, to_local=False)
            flow_cont_b = rescale_flow(flow_cont_b, self._div_flow, width_im, height_im, to_local=False)
            flow_f = rescale_flow(flow_f, self._div_flow, width_im, height_im, to_local=False)
            flow_b = rescale_flow(flow_b, self._div_flow, width_im, height_im, to_local=False)

            flows.append([flow_cont_f, flow_cont_b, flow_f, flow_b])

        output_dict['flow'] = flows
        return output_dict


def multiscale_epe(output_dict, target, div_flow):
    loss = 0.0
    for flows in output_dict['flow']:
        target_l = tf.interpolate(target, flows[0].shape[-2:], mode="bilinear", align_corners=True) * div_flow
        for flow in flows:
            loss = loss + torch.norm(flow - target_l, p=2, dim=1).mean()
    return loss


def main():
    # evaluation of a (pre-)trained model, as in the issue: inference runs without autograd
    model = PWCNet()
    model.eval()
    input_dict = {'input1': torch.rand(2, 3, 16, 16), 'input2': torch.rand(2, 3, 16, 16)}
    target = torch.randn(2, 2, 16, 16) * 2.0

    with torch.no_grad():
        output_dict = model(input_dict)
        epe = multiscale_epe(output_dict, target, model._div_flow)
    final_flow = output_dict['flow'][-1][2] * (1.0 / model._div_flow)
    return epe, final_flow


epe, final_flow = main()
