# label: hazard raises
# why: ref_intrinsics_perceptual / src_intrinsics_perceptual are only aliases of unbind views of the intrinsics tensor, and torch.matmul in the preceding project_with_depth call saved src_intrinsics[i] to backprop into the depth map, so scaling them with *= (and later /=) in place breaks loss.backward()
# source: https://github.com/whubaichuan/M3VSNet/issues/5 (models/mvsnet.py, mvsnet_loss / project_with_depth)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def project_with_depth(depth_ref, intrinsics_ref, extrinsics_ref, intrinsics_src, extrinsics_src):
    width, height = depth_ref.shape[2], depth_ref.shape[1]
    batchsize = depth_ref.shape[0]
    y_ref, x_ref = torch.meshgrid([torch.arange(0, height, dtype=torch.float32, device=depth_ref.device),
                                   torch.arange(0, width, dtype=torch.float32, device=depth_ref.device)],
                                  indexing="ij")
    y_ref, x_ref = y_ref.contiguous(), x_ref.contiguous()
    y_ref, x_ref = y_ref.view(height * width), x_ref.view(height * width)

    xyz_ref = torch.matmul(torch.inverse(intrinsics_ref),
                           torch.stack((x_ref, y_ref, torch.ones_like(x_ref))).unsqueeze(0) * depth_ref.view(batchsize, -1).unsqueeze(1))
    xyz_src = torch.matmul(torch.matmul(extrinsics_src, torch.inverse(extrinsics_ref)),
                           torch.cat((xyz_ref, torch.ones_like(x_ref.unsqueeze(0)).repeat(batchsize, 1, 1)), dim=1))[:, :3, :]
    K_xyz_src = torch.matmul(intrinsics_src, xyz_src)
    xy_src = K_xyz_src[:, :2, :] / K_xyz_src[:, 2:3, :]
    x_src = xy_src[:, 0, :].view([batchsize, height, width])
    y_src = xy_src[:, 1, :].view([batchsize, height, width])
    return x_src, y_src


def sample_loss(feat_ref, feat_src, x_src, y_src, height, width, batchsize):
    grid = torch.stack((x_src.view(batchsize, -1) / ((width - 1) / 2) - 1,
                        y_src.view(batchsize, -1) / ((height - 1) / 2) - 1), 2).unsqueeze(0)
    sampled_feature_src = F.grid_sample(feat_src, grid.view(batchsize, height, width, 2),
                                        mode='bilinear', padding_mode='zeros', align_corners=False)
    mask_perpectual = sampled_feature_src > 0
    return F.smooth_l1_loss(feat_ref[mask_perpectual], sampled_feature_src[mask_perpectual])


def mvsnet_loss(depth_est, intrinsics, extrinsics, outputs_feature):
    intrinsics = torch.unbind(intrinsics, 1)
    extrinsics = torch.unbind(extrinsics, 1)
    ref_intrinsics, src_intrinsics = intrinsics[0], intrinsics[1:]
    ref_extrinsics, src_extrinsics = extrinsics[0], extrinsics[1:]
    ref_vgg_feature, src_vgg_feature = outputs_feature[0], outputs_feature[1:]

    loss_perceptual = 0
    width, height = depth_est.shape[2], depth_est.shape[1]
    batchsize = depth_est.shape[0]
    for i in range(len(src_vgg_feature)):
        x_src, y_src = project_with_depth(depth_est, ref_intrinsics, ref_extrinsics, src_intrinsics[i], src_extrinsics[i])

        height_perceptual = int(height * 2)
        width_perceptual = int(width * 2)
        ref_intrinsics_perceptual = ref_intrinsics
        ref_intrinsics_perceptual[:, :2, :] *= 2  # <-- IPL001: ref_intrinsics is an unbind view of the same intrinsics storage as the saved src_intrinsics[i]
        src_intrinsics_perceptual = src_intrinsics[i]
        src_intrinsics_perceptual[:, :2, :] *= 2  # <-- IPL001: src_intrinsics[i] was saved by matmul in project_with_depth above
        depth_est_perceptual = F.interpolate(depth_est.unsqueeze(1), scale_factor=2, mode='bilinear', align_corners=False)
        depth_est_perceptual = depth_est_perceptual.squeeze(1)
        x_src_perceptual, y_src_perceptual = project_with_depth(depth_est_perceptual, ref_intrinsics_perceptual, ref_extrinsics,
                                                                src_intrinsics_perceptual, src_extrinsics[i])
        loss_perceptual += sample_loss(ref_vgg_feature[0], src_vgg_feature[i][0], x_src_perceptual, y_src_perceptual,
                                       height_perceptual, width_perceptual, batchsize) * 0.2

        loss_perceptual += sample_loss(ref_vgg_feature[1], src_vgg_feature[i][1], x_src, y_src,
                                       height, width, batchsize) * 0.8

        height_perceptual = int(height / 2)
        width_perceptual = int(width / 2)
        ref_intrinsics_perceptual = ref_intrinsics
        ref_intrinsics_perceptual[:, :2, :] /= 2  # <-- IPL001: writes the shared intrinsics storage saved by matmul again
        src_intrinsics_perceptual = src_intrinsics[i]
        src_intrinsics_perceptual[:, :2, :] /= 2  # <-- IPL001: same saved src_intrinsics[i], modified again in place
        depth_est_perceptual = F.interpolate(depth_est.unsqueeze(1), scale_factor=1 / 2, mode='bilinear', align_corners=False)
        depth_est_perceptual = depth_est_perceptual.squeeze(1)
        x_src_perceptual, y_src_perceptual = project_with_depth(depth_est_perceptual, ref_intrinsics_perceptual, ref_extrinsics,
                                                                src_intrinsics_perceptual, src_extrinsics[i])
        loss_perceptual += sample_loss(ref_vgg_feature[2], src_vgg_feature[i][2], x_src_perceptual, y_src_perceptual,
                                       height_perceptual, width_perceptual, batchsize) * 0.4
    return loss_perceptual


B, H, W, V = 1, 8, 10, 3
depth_head = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
ref_img = torch.rand(B, 3, H, W)
depth_est = 2.0 + torch.sigmoid(depth_head(ref_img)).squeeze(1)

K = torch.tensor([[8.0, 0.0, 5.0], [0.0, 8.0, 4.0], [0.0, 0.0, 1.0]])
intrinsics = K.view(1, 1, 3, 3).repeat(B, V, 1, 1).contiguous()
extrinsics = torch.eye(4).view(1, 1, 4, 4).repeat(B, V, 1, 1).contiguous()
extrinsics[:, 1, 0, 3] = 0.1
extrinsics[:, 2, 1, 3] = -0.1


def pyramid():
    return [torch.rand(B, 2, 2 * H, 2 * W), torch.rand(B, 2, H, W), torch.rand(B, 2, H // 2, W // 2)]


outputs_feature = [pyramid() for _ in range(V)]
loss = mvsnet_loss(depth_est, intrinsics, extrinsics, outputs_feature)
loss.backward()
