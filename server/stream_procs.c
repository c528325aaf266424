/* The calls that open a data stream: the driver slot opens the endpoint
 * (rv_driver_stream_open), server/stream.c binds it to the call. */
#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/rv_dispatch.gen.h"
#include "server/stream.h"

int rvs_handle_storage_vol_upload(rvs_call *call, rv_storage_vol_upload_args *args)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_storage_vol_upload(call, args));
}

int rvs_handle_storage_vol_download(rvs_call *call, rv_storage_vol_download_args *args)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_storage_vol_download(call, args));
}

int rvs_handle_domain_open_console(rvs_call *call, rv_domain_open_console_args *args)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_domain_open_console(call, args));
}

int rvs_handle_domain_open_channel(rvs_call *call, rv_domain_open_channel_args *args)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_domain_open_channel(call, args));
}

int rvs_handle_domain_screenshot(rvs_call *call, rv_domain_screenshot_args *args,
                                 rv_domain_screenshot_ret *ret)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_domain_screenshot(call, args, ret));
}

int rvs_handle_domain_migrate_prepare_tunnel3_params(
    rvs_call *call, rv_domain_migrate_prepare_tunnel3_params_args *args,
    rv_domain_migrate_prepare_tunnel3_params_ret *ret)
{
    rvs_stream_call_begin(call);
    return rvs_stream_call_end(call, rvs_driver_domain_migrate_prepare_tunnel3_params(call, args, ret));
}
