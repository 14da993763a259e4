# label: hazard silent
# why: save_sample clamps and rescales the caller's video tensor x in place (clamp_, sub_, div_), so the generated samples the inference loop keeps using afterwards (as the condition of the next loop) are silently rescaled to [0, 1].
# source: https://github.com/hpcaitech/Open-Sora/commit/4a70032fc498814a78af56c9327bb5cceaa04eef
import torch

torch.manual_seed(0)

WRITTEN = []


def write_video(save_path, video_array, fps=8, video_codec="h264"):
    WRITTEN.append((save_path, video_array.clone()))


def save_image(tensors, save_path, normalize=True, value_range=(-1, 1)):
    WRITTEN.append((save_path, tensors[0].clone()))


def save_sample(x, save_path=None, fps=8, normalize=True, value_range=(-1, 1), force_video=False, verbose=True):
    """
    Args:
        x (Tensor): shape [C, T, H, W]
    """
    assert x.ndim == 4

    if not force_video and x.shape[1] == 1:  # T = 1: save as image
        save_path += ".png"
        x = x.squeeze(1)
        save_image([x], save_path, normalize=normalize, value_range=value_range)
    else:
        save_path += ".mp4"
        if normalize:
            low, high = value_range
            x.clamp_(min=low, max=high)  # <-- IPL004
            x.sub_(low).div_(max(high - low, 1e-5))  # <-- IPL004

        x = x.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 3, 0).to("cpu", torch.uint8)
        write_video(save_path, x, fps=fps, video_codec="h264")
    if verbose:
        print(f"Saved to {save_path}")
    return save_path


class TinyVideoSampler(torch.nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.proj = torch.nn.Conv3d(channels, channels, kernel_size=1)

    @torch.no_grad()
    def sample(self, z, ref=None):
        x = self.proj(z)
        if ref is not None:
            x = x + 0.5 * ref.mean(dim=2, keepdim=True)
        return torch.tanh(2 * x)


def main():
    model = TinyVideoSampler()
    loop = 2
    video_clips = []
    for loop_i in range(loop):
        z = torch.randn(2, 3, 4, 6, 6)
        ref = video_clips[-1] if loop_i > 0 else None
        samples = model.sample(z, ref=ref)
        for idx, sample in enumerate(samples):
            save_sample(sample, fps=8, save_path=f"sample_{loop_i}_{idx}")
        video_clips.append(samples)
    video = torch.cat(video_clips, dim=2)
    return video, dict(WRITTEN)["sample_1_0.mp4"].float()


video, last_written = main()
