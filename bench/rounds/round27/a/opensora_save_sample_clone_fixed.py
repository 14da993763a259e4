# label: safe
# why: after the fix save_sample first takes _x = x.clone() and only clamps/rescales that private copy in place, so the samples the inference loop reuses as the next loop's condition keep their [-1, 1] values.
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
    _x = x.clone()

    if not force_video and _x.shape[1] == 1:  # T = 1: save as image
        save_path += ".png"
        _x = _x.squeeze(1)
        save_image([_x], save_path, normalize=normalize, value_range=value_range)
    else:
        save_path += ".mp4"
        if normalize:
            low, high = value_range
            _x.clamp_(min=low, max=high)
            _x.sub_(low).div_(max(high - low, 1e-5))

        _x = _x.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 3, 0).to("cpu", torch.uint8)
        write_video(save_path, _x, fps=fps, video_codec="h264")
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
